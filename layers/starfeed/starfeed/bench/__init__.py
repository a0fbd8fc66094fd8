"""Benchmarks: each prints its figures and their ratio to a target measured or set beside them."""
