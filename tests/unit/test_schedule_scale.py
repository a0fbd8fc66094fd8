"""The scheduler scale bench (starfeed.bench.schedule_scale): its exponent fit, its DynamoDB item
sizes, its report; and one tiny run in a process of its own (its own moto)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from starfeed.bench.schedule_scale import DUE_SHARE, fit_exponent, item_bytes, record_bytes, scaling, table

SIZES = [10_000, 30_000, 100_000]


@pytest.mark.parametrize("b", [0.0, 0.5, 1.0, 1.3])
def test_the_fit_recovers_a_power_law(b):
    assert fit_exponent(SIZES, [2.5 * n ** b for n in SIZES]) == pytest.approx(b, abs=1e-9)


def test_the_fit_is_least_squares_on_log_log():
    # Noise of ×1.1 and ×0.9 on a linear law: the slope of the three log points, by hand.
    values = [n * f for n, f in zip(SIZES, (1.1, 0.9, 1.0))]
    xs, ys = [math.log(n) for n in SIZES], [math.log(v) for v in values]
    mx, my = sum(xs) / 3, sum(ys) / 3
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    assert fit_exponent(SIZES, values) == pytest.approx(slope)
    assert 0.9 < slope < 1.1


def test_no_fit_without_two_sizes_or_with_nothing_measured():
    assert fit_exponent([10_000], [1.0]) is None
    assert fit_exponent([10_000, 10_000], [1.0, 2.0]) is None
    assert fit_exponent(SIZES, [0.0, 0.0, 0.0]) is None
    assert fit_exponent(SIZES, [0.0, 1.0, 2.0]) == pytest.approx(math.log(2) / math.log(100_000 / 30_000))


def test_dynamodb_sizes_follow_the_developer_guides_rules():
    assert item_bytes({"S": "abc"}) == 3
    assert item_bytes({"S": "é"}) == 2  # UTF-8 bytes
    assert item_bytes({"N": "1700000000"}) == 6  # ten digits: 5 bytes, plus 1
    assert item_bytes({"BOOL": True}) == 1
    assert item_bytes({"L": [{"N": "1"}, {"N": "2"}]}) == 3 + 2 * (1 + 1)
    assert item_bytes({"M": {"ab": {"S": "x"}}}) == 3 + 1 + 2 + 1
    assert record_bytes({"source_id": {"S": "0" * 12}, "n": {"N": "42"}}) == 9 + 12 + 1 + 2


def test_the_default_due_share_is_schedsims_fetch_rate_over_the_days_runs():
    assert DUE_SHARE == pytest.approx(2.2 / 288)
    assert round(1_000_000 * DUE_SHARE) == 7639


def _row(n, run_s, pace_s):
    due = round(n * DUE_SHARE)
    return {"sources": n, "due": due, "leased": due, "leased_per_s": round(due / run_s, 1), "index_items_read": due,
            "items_read_per_due_source": 1.0, "dynamodb_requests_per_run": due + 6, "run_s": run_s,
            "pace_input_bytes": 700 * n,
            "phases": {"query_s": 0.01, "leases_s": run_s / 2, "pauses_s": 0.01, "enqueue_s": run_s / 4,
                       "pace_scan_s": pace_s, "pace_compute_s": pace_s / 100}}


def test_the_report_fits_every_phase_and_prints_a_row_per_size():
    rows = [_row(n, n / 1000, n / 500) for n in SIZES]
    exponents = scaling(rows)
    assert exponents["run_s"] == 1.0 and exponents["pace_scan_s"] == 1.0 and exponents["leases_s"] == 1.0
    assert exponents["query_s"] == 0.0  # the same at every size
    assert exponents["index_items_read"] == 1.0 and exponents["pace_input_bytes"] == 1.0
    text = table(rows, exponents)
    lines = text.splitlines()
    assert lines[0].startswith("sources | due | leased | leased/s | leases/s | items read")
    assert [line.split(" | ")[0] for line in lines[2:5]] == ["10,000", "30,000", "100,000"]
    assert lines[-1].startswith("exponent b") and "run_s 1.0" in lines[-1]


@pytest.mark.slow  # a benchmark's subprocess on moto
def test_a_tiny_run_reports_every_size_with_reads_equal_to_the_due_sources(tmp_path):
    """Two small sizes in a subprocess (about 5 s): moto's backends are process-wide."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root / "layers" / "starfeed")}
    out = subprocess.run([sys.executable, "-m", "starfeed.bench.schedule_scale", "--sizes", "300,900", "--due", "10",
                          "--json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    rows = report["rows"]
    assert [r["sources"] for r in rows] == [300, 900]
    for r in rows:
        assert r["due"] == r["leased"] == r["enqueued"] == r["queue_depth"] == r["index_items_read"] == 10
        # One lease each, and the run's own record (stats table); the pace's write is counted apart.
        assert 10 <= r["requests_per_run"]["dynamodb:UpdateItem"] <= 11
        assert r["pace_requests"]["dynamodb:UpdateItem"] == 1
        assert r["requests_per_run"]["dynamodb:Query"] == r["index_queries"]
        assert r["pace_requests"]["dynamodb:Scan"] >= 1
        # With its 10 fetches and 5 decisions, and under 2 KB: a lease or an outcome costs 2 write units.
        assert 1500 < r["source_item_bytes"] < 2048
    assert set(report["exponents"]) >= {"run_s", "pace_scan_s", "index_items_read"}
