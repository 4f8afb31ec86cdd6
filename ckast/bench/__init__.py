"""`ckast bench emit`: a C++ benchmark driver for a generated library and a problems file.

`plan.plan` reads the library and the problems and groups them (`plan.py`); `chunks.chunks` cuts the
kernel runs into chunks (`chunks.py`); the driver's main TU and the header its chunks share (`driver.py`) and one TU per
chunk (`launch.py`) are built from nodes; `driver_cmake` writes the CMake file that builds them against the
library's `ckast_kernels.cmake` (`cmake.py`); `write_driver` writes them all (`files.py`). Built and run on
an AMD GPU, the driver writes one timing table per part in the columns `ckast select train` reads.

The names below are imported from their modules on first use (PEP 562), so the command line can read
`CHUNK_KERNELS` without importing the planner (`plan` and `chunks` name modules here: import those
functions from them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ckast.lazy import exports

if TYPE_CHECKING:
    from .chunks import CHUNK_KERNELS, Chunk
    from .cmake import CMAKE, DRIVER, driver_cmake
    from .driver import HEADER
    from .files import driver_files, write_driver
    from .plan import Plan

__all__ = ["CHUNK_KERNELS", "CMAKE", "DRIVER", "HEADER", "Chunk", "Plan", "driver_cmake", "driver_files",
           "write_driver"]
_SOURCE = {
    **dict.fromkeys(("CHUNK_KERNELS", "Chunk"), "chunks"),
    **dict.fromkeys(("CMAKE", "DRIVER", "driver_cmake"), "cmake"),
    "HEADER": "driver",
    **dict.fromkeys(("driver_files", "write_driver"), "files"),
    "Plan": "plan",
}

__getattr__, __dir__ = exports(__name__, _SOURCE, __all__)
