"""One module per op; each defines ``OP = compare.spec.Op(...)``. The harness finds them by listing this package."""
