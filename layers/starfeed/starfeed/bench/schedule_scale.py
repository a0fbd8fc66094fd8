"""One scheduler run over 100,000 sources of which 1,000 are due, against the local stack.

    python -m starfeed.bench.schedule_scale [--sources 100000] [--due 1000]

Issue 7: the run should read about as many index items as there are due sources, take that many
leases and enqueue that many messages (SendMessageBatch), whatever the total.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

from starfeed.local.snapshot import _backends, _insert
from starfeed.local.stack import LocalStack
from starfeed.model import Source
from starfeed.schedule.tick import run_tick
from starfeed.settings import Settings
from starfeed.store import Storage
from starfeed.store.sources import source_record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=100_000)
    parser.add_argument("--due", type=int, default=1_000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    stack = LocalStack(state=Path(tempfile.mkdtemp()))
    try:
        storage = Storage(Settings.from_env(stack.environment))
        now = time.time()
        table = _backends()[0].get_table(stack.stack.refs["SourcesTable"])
        started = time.monotonic()
        for n in range(args.sources):
            due = n < args.due
            source = Source(source_id=f"{n:012x}", url=f"https://host{n % 5000}.example/feed{n}.xml",
                            created_at=now, status="ok", interval=900,
                            next_check_at=now - 60 if due else now + 3600 + n)
            _insert(table, source_record(storage.records, source, storage.settings).serialize())
        setup_s = time.monotonic() - started

        queries, phases = [], {"query_s": 0.0, "leases_s": 0.0, "pauses_s": 0.0, "enqueue_s": 0.0,
                               "hourly_pace_s": 0.0}

        def timed(owner, name, phase, record=None):
            original = getattr(owner, name)

            def wrapper(*a, **k):
                started = time.monotonic()
                result = original(*a, **k)
                if record is not None:
                    record.append(result)
                if phase:
                    phases[phase] += time.monotonic() - started
                return result
            setattr(owner, name, wrapper)

        timed(storage.records.Source.due, "query", None, queries)  # counts the items each Query read
        timed(storage.sources, "due_ids", "query_s")
        timed(storage.sources, "take_lease", "leases_s")
        timed(storage.hosts, "paused", "pauses_s")
        timed(storage.queues, "send_fetches", "enqueue_s")
        # Once an hour the run also steps the pace: one Scan of every source (schedule/pace.py).
        timed(storage.sources, "scheduled_publications", "hourly_pace_s")
        started = time.monotonic()
        report = run_tick(storage, now)
        wall_s = time.monotonic() - started
        read = sum(q.total_count for q in queries)
        queued = int(stack.sqs.get_queue_attributes(QueueUrl=stack.queue("FetchQueue"),
                                                    AttributeNames=["ApproximateNumberOfMessages"])
                     ["Attributes"]["ApproximateNumberOfMessages"])
        print(json.dumps({"sources": args.sources, "due": args.due, "index_items_read": read,
                          "index_queries": len(queries), "leased": report.leased,
                          "enqueued": report.enqueued, "queue_depth": queued,
                          "items_read_per_due_source": round(read / max(1, args.due), 3),
                          "setup_s": round(setup_s, 1), "scheduler_run_wall_s": round(wall_s, 2),
                          # Against moto: its FIFO SendMessageBatch does work per queued message,
                          # so enqueue_s is the emulator's; real SQS takes ~20 ms a batch of ten.
                          "phases": {k: round(v, 2) for k, v in phases.items()}}, indent=1))
    finally:
        stack.close()


if __name__ == "__main__":
    main()
