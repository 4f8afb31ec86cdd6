"""A host-only model of CK Tile, so emitted headers can be JIT-compiled and run in-process with cppyy.

Cling cannot parse the real CK Tile headers (they need HIP device compilation). The model has two
halves: declarations generated from the signature catalog (`model.py`: every template with the
catalog's parameters, kinds and defaults, every enum and type), and small hand-written behaviour
(`behaviour/*.hpp`, `include/`) that specializes `ckast_model::behaviour<tag, params>` for the
templates launchers need to run. `jit.py` loads one model per API profile into one Cling process and
compiles units against it; `ckast.testing` is the public API on top.
"""
