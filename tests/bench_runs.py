"""`make bench`'s entry points, read from the Makefile, and the tiny input each is smoke-run with
(tests/unit/test_bench_smoke.py, tests/integration/test_bench_on_a_stack.py): a benchmark that no
longer runs fails the tests, not the next person who runs `make bench`."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each benchmark's tiny input ({folder}: a temporary folder), and what its report says when it ran
# through. Those on a local stack run in the integration tier.
TINY = {
    "ingest": (["--corpus", "{folder}", "--repeat", "1"], '"synthetic_100"'),
    "github": (["--users", "3", "--days", "0.25"], "requests per hour"),
    "extract": (["--limit", "1"], ""),
    "schedsim": (["--population", "{folder}/population.jsonl", "--days", "1"], "starfeed against"),
    "serve": (["--quick"], '"cache_replay"'),
    "snapshot": (["--sources", "3", "--entries", "5"], '"restore_s"'),
    "schedule_scale": (["--sources", "20", "--due", "5"], '"run_s"'),
    "aws_requests": (["--items", "3", "--members", "3"], "fetch: one new entry"),
    "enrich": (["--entries", "2", "--rounds", "1"], "per entry"),
}
ON_A_STACK = ("serve", "snapshot", "schedule_scale", "aws_requests", "enrich")
# Run by hand only, and why.
BY_HAND = {"freshness": "it starts `make run`'s program in a process of its own and times its scheduler's runs: "
                        "minutes, not seconds"}


def make_bench_modules() -> list[str]:
    """The benchmarks `make bench` runs, in its order."""
    recipe = (ROOT / "Makefile").read_text().split("\nbench:", 1)[1].split("\n\n", 1)[0]
    return list(dict.fromkeys(re.findall(r"-m starfeed\.bench\.(\w+)", recipe)))


def run_bench(name: str, folder: Path) -> str:
    """Runs one benchmark on its tiny input as `make bench` runs it (a process of its own); its
    output, after checking that it ran through."""
    if name == "schedsim":  # `make bench` generates its population first
        run_module(name, ["--generate", f"{folder}/population.jsonl", "--feeds", "20", "--seed", "1"], folder)
    args, says = TINY[name]
    out = run_module(name, [arg.format(folder=folder) for arg in args], folder)
    assert says in out, out[-2000:]
    return out


def run_module(name: str, args: list[str], folder: Path) -> str:
    done = subprocess.run([sys.executable, "-m", f"starfeed.bench.{name}", *args], cwd=folder,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"starfeed.bench.{name} {' '.join(args)} failed:\n{done.stdout[-2000:]}" \
                                 f"\n{done.stderr[-4000:]}"
    return done.stdout
