"""Triton implementations, one module per op; functions marked ``@variant(name)`` are the rows ``triton:<name>``."""
