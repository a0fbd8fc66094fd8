"""`make bench`'s benchmarks on a local stack of their own run through on a tiny input
(tests/bench_runs.py); the others are run by tests/unit/test_bench_smoke.py."""

import pytest

from bench_runs import ON_A_STACK, run_bench


@pytest.mark.slow
@pytest.mark.parametrize("name", ON_A_STACK)
def test_a_benchmark_on_a_local_stack_runs_through(name, tmp_path):
    run_bench(name, tmp_path)
