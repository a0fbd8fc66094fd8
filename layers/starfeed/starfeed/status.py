"""What `starfeed status` measures: the three SLOs (docs/design.md#slos), from what every source keeps of its
last fetches. Pure: the sources in, the figures out.

- p99 fetch latency under 5 s: the requests of the last day's recorded fetches;
- the error budget, under 2% failed fetches a day, publishers' and servers' faults aside: a
  failure is starfeed's when a stage of its own broke (fetch/stage.py), the publisher's otherwise
  (an HTTP error, a network fault, a document that is not a feed);
- scheduler freshness, 95% of sources polled within twice the wait chosen for them
  (schedule/freshness.py): a scheduled source is late once it has waited for its check longer
  than that wait.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from starfeed.model import FailureClass, Source, Status, failure_words, outcome_of
from starfeed.parse.normalize import rfc3339
from starfeed.schedule import freshness

DAY = 86400
LATENCY_TARGET_MS = 5000
ERROR_BUDGET = 0.02
FRESHNESS_TARGET = freshness.TARGET
SUCCEEDED = ("ok", "not-modified", "push")


@dataclass(frozen=True)
class Slos:
    fetches: int  # recorded in the last day
    latency_p99_ms: int | None  # None: no request recorded its duration
    failed_ours: int
    failed_theirs: int
    scheduled: int  # sources with a chosen wait
    late: int

    @property
    def error_share(self) -> float:
        return self.failed_ours / self.fetches if self.fetches else 0.0

    @property
    def fresh_share(self) -> float:
        return 1 - self.late / self.scheduled if self.scheduled else 1.0


def slos(sources: list[Source], now: float, period: float) -> Slos:
    """period: the scheduler's, in seconds (settings.schedule_period)."""
    since = rfc3339(now - DAY)
    records = [r for s in sources for r in s.fetch_history if isinstance(r, dict) and str(r.get("at", "")) >= since]
    durations = sorted(r["ms"] for r in records if isinstance(r.get("ms"), (int, float)))
    failed = [r for r in records if outcome_of(r) not in SUCCEEDED]
    ours = sum(1 for r in failed if r.get("class") == FailureClass.OURS)
    on_time, scheduled = freshness.measured(sources, now, period)
    return Slos(len(records), _p99(durations), ours, len(failed) - ours, scheduled, scheduled - on_time)


def failing_by_cause(sources: list[Source]) -> list[tuple[str, int]]:
    """The failing sources (served, in error or stopped), counted by their failure in a few words
    ("blocked by bot protection (Cloudflare)", "timed out"), most first."""
    causes = Counter(failure_words(s.failure, s.last_error) or "failing, cause unrecorded" for s in sources
                     if s.live and s.status in (Status.ERROR, Status.DEAD))
    return causes.most_common()


def _p99(values: list[float]) -> int | None:
    if not values:
        return None
    return int(values[max(0, math.ceil(0.99 * len(values)) - 1)])
