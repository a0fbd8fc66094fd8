"""Which normalized entries a source keeps (seed 002's age rules, seed 004's domain rule). Pure."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from starfeed.model import Entry, Source, host_of
from starfeed.parse.normalize import rfc3339

DAY = 86400


@dataclass
class Filtered:
    kept: list[Entry]
    dropped: Counter = field(default_factory=Counter)  # reason -> count

    def summary(self) -> list[str]:
        return [f"{count} {reason}" for reason, count in self.dropped.items()]


def filter_entries(entries: list[Entry], source: Source, now: float, max_age_days: int) -> Filtered:
    """- enforce_feed_domain: drop items linking off the feed's host;
    - older than the maximum article age: dropped (entries without a date are kept);
    - on a source's first successful poll, items published before it was created are dropped
      (entries without a date are kept)."""
    oldest = rfc3339(now - max_age_days * DAY)
    created = rfc3339(source.created_at)
    first_poll = source.last_success_at is None
    feed_host = host_of(source.url)
    result = Filtered(kept=[])
    for entry in entries:
        if source.enforce_feed_domain and entry.canonical_link and host_of(entry.canonical_link) != feed_host:
            result.dropped["linking off the feed's domain"] += 1
        elif entry.published and entry.published < oldest:
            result.dropped[f"older than {max_age_days} days"] += 1
        elif first_poll and entry.published and entry.published < created:
            result.dropped["published before the source was added"] += 1
        else:
            result.kept.append(entry)
    return result
