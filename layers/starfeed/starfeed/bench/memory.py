"""Memory sizes by measurement (docs/design.md#target-cost): each function's typical invocation priced at
several memory sizes, power-tuning style, and the cheapest size that keeps it quick.

    python -m starfeed.bench.memory [--json]

Typical invocations, measured on the local stack by bench/cost.py's fetch cycles (10 sources):
the scheduler's tick with 10 due sources; the fetcher's batch of 10 fetches (one new entry each,
plus cost.ORIGIN_SECONDS a fetch for a real origin); the renderer's batch after them; the api's
reader request that revalidates its object. The enricher, history, websub and rest functions
run rarely (a deframed source's new entry, a walk, a hub's push, a program's call): they are not
measured here and keep their sizes.

The model (bench/cost.py): duration at M MB = CPU time x max(1, 1769 / M) + waiting (Lambda gives
a whole vCPU at 1,769 MB and a share of it below; waiting for AWS and the origin does not scale).
Memory needed = the function's import RSS (a fresh process importing its handler module, as a
cold start does; Python 3.11 x86-64 here, Lambda runs 3.13 on arm64) + the invocation's peak of
Python allocations (tracemalloc, moto's threads included: an upper bound), with HEADROOM.
Recommended: the cheapest size that holds that memory, whose duration is within SLOWEST x the
fastest size's or the function's BUDGET, and under the function's timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

from starfeed.bench import cost

SIZES_MB = (128, 256, 512, 1024)
SLOWEST = 1.5  # a size may be at most this much slower than the fastest...
# ...or take as long as the function's own budget (seconds a typical invocation), if longer:
# the tick has 5 minutes; ten fetches have the fetcher's 300 s timeout, keep them well under;
# a render must land within a tick plus 10 s of the fetch (docs/design.md#target-freshness), less the 3 s batching
# window; a reader waits on the api, whose answer should stay around a tenth of a second.
BUDGET = {"SchedulerFunction": 5.0, "FetcherFunction": 60.0, "RendererFunction": 7.0, "ApiFunction": 0.1}
HEADROOM = 1.25  # memory needed x this must fit
TYPICAL = {  # function -> (the cost.py phase of its typical invocation, fetches it carries)
    "SchedulerFunction": "304",
    "FetcherFunction": "one new entry",
    "RendererFunction": "one new entry",
    "ApiFunction": "reader: revalidated, counters flushed",
}


def import_rss_mb(function: str, root: Path) -> float:
    """Max RSS of a fresh Python that imports the function's handler module (its cold start)."""
    code = ("import importlib.util, resource, sys\n"
            "spec = importlib.util.spec_from_file_location('handler', sys.argv[1])\n"
            "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
            # VmHWM: ru_maxrss would carry the parent's high-water mark over fork and exec.
            "print(next((l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')),"
            " resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n")
    folder = {"WebSubFunction": "websub"}.get(function, function.removesuffix("Function").lower())
    done = subprocess.run([sys.executable, "-c", code, str(root / "functions" / folder / "app.py")],
                          capture_output=True, text=True, check=True, env=dict(os.environ))
    return int(done.stdout.split()[-1]) / 1024  # kilobytes on Linux


def typical(measured: dict, peaks: dict) -> dict[str, dict]:
    """Each function's typical invocation: CPU, waiting, peak allocations."""
    out = {}
    for function, phase_name in TYPICAL.items():
        invocations = [i for i in measured["phases"][phase_name].invocations if i.function == function]
        traced = [i for i in peaks["phases"][phase_name].invocations if i.function == function]
        cpu = sum(i.cpu for i in invocations) / len(invocations)
        wall = sum(i.wall for i in invocations) / len(invocations)
        records = sum(i.records for i in invocations) / len(invocations)
        origin = cost.ORIGIN_SECONDS * records if function == "FetcherFunction" else 0.0
        out[function] = {"records": records, "cpu_s": cpu, "waiting_s": max(0.0, wall - cpu) + origin,
                         "peak_alloc_mb": max((i.peak_bytes for i in traced), default=0) / 2**20}
    return out


def recommend(figures: dict, import_mb: float, timeout: float, budget: float = 0.0) -> dict:
    """Duration and cost per million invocations at each size; the recommended size."""
    needed = (import_mb + figures["peak_alloc_mb"]) * HEADROOM
    rows = {}
    for mb in SIZES_MB:
        seconds = cost.duration(figures["cpu_s"], figures["waiting_s"], mb)
        usd = 1e6 * (seconds * mb / 1024 * cost.PRICES["lambda_gb_second_arm64"].usd
                     + cost.PRICES["lambda_request"].usd)
        rows[mb] = {"duration_s": seconds, "usd_per_million": usd, "fits": mb >= needed}
    fastest = min(r["duration_s"] for r in rows.values())
    fine = [mb for mb, r in rows.items()
            if r["fits"] and r["duration_s"] <= max(SLOWEST * fastest, budget) and r["duration_s"] < timeout]
    best = min(fine, key=lambda mb: rows[mb]["usd_per_million"]) if fine else max(SIZES_MB)
    return {"needed_mb": needed, "sizes": rows, "recommended_mb": best}


def run() -> dict:
    measured = cost.measure()
    tracemalloc.start()
    try:
        peaks = cost.measure(sources=cost.SOURCES)
    finally:
        tracemalloc.stop()
    from starfeed.local.state import project_root
    root = project_root()
    result = {}
    for function, figures in typical(measured, peaks).items():
        import_mb = import_rss_mb(function, root)
        result[function] = {**figures, "import_rss_mb": import_mb, "configured_mb": measured["memory"][function],
                            "timeout_s": measured["timeouts"][function],
                            **recommend(figures, import_mb, measured["timeouts"][function], BUDGET[function])}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run()
    if args.json:
        print(json.dumps(result, indent=1))
        return
    budgets = ", ".join(f"{k.removesuffix('Function')} {v} s" for k, v in BUDGET.items())
    print(f"Duration at M MB = CPU x max(1, {cost.FULL_VCPU_MB}/M) + waiting; memory needed = import RSS +"
          f" peak allocations, x{HEADROOM}; recommended: the cheapest size within {SLOWEST}x the fastest"
          f" or the function's budget ({budgets}).")
    print("| function | invocation | CPU | waiting | import RSS + peak | "
          + " | ".join(f"{mb} MB" for mb in SIZES_MB) + " | now | recommended |")
    print("|---|---|---|---|---|" + "---|" * len(SIZES_MB) + "---|---|")
    for function, r in result.items():
        cells = " | ".join(f"{s['duration_s'] * 1000:.0f} ms, ${s['usd_per_million']:.2f}/M"
                           + ("" if s["fits"] else " (too small)") for s in r["sizes"].values())
        print(f"| {function} | {r['records']:.0f} record(s) | {r['cpu_s'] * 1000:.0f} ms"
              f" | {r['waiting_s'] * 1000:.0f} ms | {r['import_rss_mb']:.0f} + {r['peak_alloc_mb']:.0f} MB"
              f" | {cells} | {r['configured_mb']} |"
              f" **{r['recommended_mb']}** |")


if __name__ == "__main__":
    main()
