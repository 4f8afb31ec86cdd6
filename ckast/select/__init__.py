"""Kernel selection: which kernel of a generated library runs a given problem best.

`problem` holds the problems (GEMM, grouped conv) and how they are read.
"""
