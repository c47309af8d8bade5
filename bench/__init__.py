"""Benchmark scripts: they print tables; figures go to docs/benchmarks.md."""
