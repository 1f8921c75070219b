"""Benchmark CREATOR against other methods on the paper's workload."""
