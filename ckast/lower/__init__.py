"""Lowering: validated configs -> C++ AST files (and, from issue 3 on, the IR graph between)."""
