"""ckast's version, as installed, read without `importlib.metadata` (whose import alone takes about 40 ms of
a `ckast --version`)."""

from __future__ import annotations

import os
import sys

_DIST = "ckast-"
"""How the folders of the installed distribution's metadata start (`ckast-<version>.dist-info`)."""


def version() -> str:
    """The version of the ckast distribution `importlib.metadata` finds (the first on `sys.path`): the name
    of its `.dist-info` folder says it, or an `.egg-info` folder's PKG-INFO; where the metadata is another
    kind, `importlib.metadata` reads it.
    "0.0.0" for a source tree that is not installed."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # not a folder (a zip archive, a missing path)
            continue
        for name in names:
            if name.startswith(_DIST) and name.endswith(".dist-info"):
                return name[len(_DIST):-len(".dist-info")]
            if name.lower().startswith(("ckast.egg-info", _DIST)) and name.endswith(".egg-info"):
                return _egg_version(os.path.join(entry or ".", name))
    return _from_metadata()


def _egg_version(folder: str) -> str:
    """The version an `.egg-info` folder's PKG-INFO states (an editable install leaves one in the source
    tree), else `importlib.metadata`'s."""
    try:
        with open(os.path.join(folder, "PKG-INFO"), encoding="utf-8") as info:
            for line in info:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():  # the headers end at the first blank line
                    break
    except OSError:
        pass
    return _from_metadata()


def _from_metadata() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as read

    try:
        return read("ckast")
    except PackageNotFoundError:
        return "0.0.0"


def version_line() -> str:
    """What `ckast --version` prints."""
    return f"ckast, version {version()}"
