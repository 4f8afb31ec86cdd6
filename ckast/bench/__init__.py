"""`ckast bench emit`: a C++ benchmark driver for a generated library and a problems file.

`plan` reads the library and the problems and groups them (`plan.py`); `driver_file` builds the
driver TU from nodes (`driver.py`); `driver_cmake` writes the CMake file that builds it against the
library's `ckast_kernels.cmake` (`cmake.py`). Built and run on an AMD GPU, the driver writes one timing
table per part in the columns `ckast select train` reads.
"""

from __future__ import annotations

from .cmake import CMAKE, DRIVER, driver_cmake
from .driver import driver_file
from .plan import Plan, plan

__all__ = ["CMAKE", "DRIVER", "Plan", "driver_cmake", "driver_file", "plan"]
