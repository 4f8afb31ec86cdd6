"""Kernel selection: which kernel of a generated library runs a given problem best.

The modules stand on floors, each importing only its own floor and those below (tests/test_select_floors.py
holds the table and checks it): the problem types (`problem`); the selection language (`expr`, `libm`);
features, applicability, validity, reading problems (`problem_read`) and the library; the models (`analytic`,
`forest`, `lightgbm_model`, ...); the timing and kernel tables; ranking and evaluation (`rank`, `batch`,
`evaluate`, `shift`, `best_of`, `train`); reports and workloads; the C++ selector (`cxx`).
"""
