"""`make bench`'s benchmarks run through on a tiny input (tests/bench_runs.py): those without a local
stack here, the others in tests/integration/test_bench_on_a_stack.py."""

import pytest

from bench_runs import BY_HAND, ON_A_STACK, TINY, make_bench_modules, run_bench


def test_every_benchmark_make_bench_runs_has_a_tiny_input():
    assert set(make_bench_modules()) == set(TINY) | set(BY_HAND)
    assert set(ON_A_STACK) <= set(TINY)


@pytest.mark.slow  # a process each: seconds, not the milliseconds of `make test-fast`'s tests
@pytest.mark.parametrize("name", [name for name in TINY if name not in ON_A_STACK])
def test_a_benchmark_runs_through(name, tmp_path):
    run_bench(name, tmp_path)
