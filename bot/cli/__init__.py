"""The `digestbot` command line: one module per command group, shared options."""
