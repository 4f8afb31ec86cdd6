"""Lowering: validated configs -> IR graph -> C++ AST files (identity, graph, registration, shared builders)."""
