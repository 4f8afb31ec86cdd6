"""Kernel selection: which kernel of a generated library runs a given problem best.

The subpackages are floors, each importing only its own floor and those below (tests/test_select_floors.py holds
the table and checks it), from the ground up: the problem types (`problem`); the selection language (`expr`);
CK's features (`features`) and what a library serves (`serving`: applicability, validity, reading problems, the
library); the models (`models`); tables of kernels and timings (`tables`); ranking and evaluation (`ranking`);
reports and workloads (`reports`); the C++ selector (`cxx`).
"""
