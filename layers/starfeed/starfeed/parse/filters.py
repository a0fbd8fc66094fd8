"""Which normalized entries a source keeps (the date and domain filters: docs/design.md#filters), and
where a first fetch's undated backlog sits in time order. Pure."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from starfeed.model import Entry, Source, host_of
from starfeed.parse.normalize import epoch_of, rfc3339

DAY = 86400
# A first fetch keeps at most this many undated entries, the feed's first ones: a feed whose whole
# backlog is undated contributes its newest few, not dozens (`--backfill N` keeps more).
FIRST_FETCH_UNDATED = 3


@dataclass
class Filtered:
    kept: list[Entry]
    dropped: Counter[str] = field(default_factory=Counter)  # reason -> count


def filter_entries(entries: list[Entry], source: Source, now: float, max_age_days: int) -> Filtered:
    """- enforce_feed_domain: drop items linking off the feed's host;
    - older than the maximum article age: dropped;
    - on a source's first successful poll: items published before it was created are dropped,
      and of the undated ones only the first FIRST_FETCH_UNDATED are kept;
    - on that poll, source.backfill keeps the newest N entries whatever their age or date.
    A first fetch's undated entries predate the subscription by an unknown time: they are
    placed (ordered_at) with the oldest entries the age rule keeps, in the feed's own order,
    so they never lead an aggregate over dated news; later ones sit where they were first seen,
    in the feed's order."""
    oldest = rfc3339(now - max_age_days * DAY)
    created = rfc3339(source.created_at)
    first_poll = source.last_success_at is None
    backlog = max(now - max_age_days * DAY, 0)  # where a first fetch's undated entries sit
    feed_host = host_of(source.url)
    result = Filtered(kept=[])
    on_domain = []
    for entry in entries:
        if source.enforce_feed_domain and entry.canonical_link and host_of(entry.canonical_link) != feed_host:
            result.dropped["linking off the feed's domain"] += 1
        else:
            on_domain.append(entry)
    backfilled = set(map(id, _newest(on_domain, source.backfill))) if first_poll else set()
    undated = 0
    for entry in on_domain:
        if id(entry) in backfilled:
            pass
        elif entry.published and entry.published < oldest:
            result.dropped[f"older than {max_age_days} days"] += 1
            continue
        elif first_poll and entry.published and entry.published < created:
            result.dropped["published before you subscribed"] += 1
            continue
        elif first_poll and not entry.published and undated >= FIRST_FETCH_UNDATED:
            result.dropped[f"undated beyond the feed's first {FIRST_FETCH_UNDATED}"] += 1
            continue
        if not entry.published:
            # A second apart in the feed's order, so readers keep the feed's order and no two
            # entries claim the same instant.
            entry.ordered_at = rfc3339((backlog if first_poll else now) - undated)
            undated += 1
        result.kept.append(entry)
    return result


def history_entries(entries: list[Entry], source: Source, now: float, max_age_days: int) -> Filtered:
    """An archive document's entries (RFC 5005 history): all kept whatever their dates, marked
    backfilled, but for those linking off the feed's host when the source says so. The undated
    ones, and those dated in the future, sit below the document's oldest dated entry, in the
    document's order: history never leads an aggregate as if new."""
    seen = rfc3339(now)
    dated = [e.published for e in entries if e.published and e.published <= seen]
    # Below the document's oldest dated entry (or the age rule's oldest), in the document's order.
    backlog = epoch_of(min(dated)) - 1 if dated else max(now - max_age_days * DAY, 0)
    feed_host = host_of(source.url)
    result = Filtered(kept=[])
    undated = 0
    for entry in entries:
        if source.enforce_feed_domain and entry.canonical_link and host_of(entry.canonical_link) != feed_host:
            result.dropped["linking off the feed's domain"] += 1
            continue
        entry.backfilled = True
        if not entry.published or entry.published > seen:  # a date in the future is not one to sort by
            entry.ordered_at = rfc3339(backlog - undated)
            undated += 1
        result.kept.append(entry)
    return result


def _newest(entries: list[Entry], count: int) -> list[Entry]:
    """The newest count entries: dated ones by date, then undated ones in the feed's order."""
    count = count if isinstance(count, int) else 0  # a hand-edited item may hold anything
    if count <= 0:
        return []
    return sorted(entries, key=lambda e: e.published or "", reverse=True)[:count]
