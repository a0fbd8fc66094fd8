"""Which normalized entries a source keeps (the date and domain filters: docs/design.md#filters), and
where a first fetch's undated backlog sits in time order. A date in the future when first seen
(beyond the clock skew allowed) is no date to sort or filter by: such an entry counts as undated,
and keeps its date as the source gave it (docs/design.md#undated-and-future). Pure."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from starfeed.model import Entry, Source, host_of
from starfeed.parse.normalize import epoch_of, rfc3339
from starfeed.settings import Settings

DAY = 86400
# A first fetch keeps at most this many undated entries, the feed's first ones: a feed whose whole
# backlog is undated contributes its newest few, not dozens (`--backfill N` keeps more).
FIRST_FETCH_UNDATED = 3


@dataclass
class Filtered:
    kept: list[Entry]
    dropped: Counter[str] = field(default_factory=Counter)  # reason -> count
    # What a first fetch's new-subscription rules left out: the source's digest remembers them as
    # seen, so the feed's next change does not bring them in as new (docs/design.md#left-out).
    left_out: list[Entry] = field(default_factory=list)


def trusted_date(entry: Entry, trusted_until: str) -> str | None:
    """The entry's date, when it is one to sort and filter by: none later than trusted_until (the
    fetch's time plus the clock skew allowed)."""
    return entry.published if entry.published and entry.published <= trusted_until else None


def filter_entries(entries: list[Entry], source: Source, now: float, max_age_days: int,
                   future_skew: int = Settings.future_skew) -> Filtered:
    """- enforce_feed_domain: drop items linking off the feed's host;
    - older than the maximum article age: dropped;
    - on a source's first successful poll: items published before it was created are dropped,
      and of the undated ones only the first FIRST_FETCH_UNDATED are kept (those dropped are
      left_out);
    - on that poll, source.backfill keeps the newest N entries whatever their age or date.
    An entry dated more than future_skew seconds after now counts as undated. A first fetch's
    undated entries predate the subscription by an unknown time: they are placed (ordered_at)
    with the oldest entries the age rule keeps, in the feed's own order, so they never lead an
    aggregate over dated news; later ones sit where they were first seen, in the feed's order."""
    oldest = rfc3339(now - max_age_days * DAY)
    trusted_until = rfc3339(now + future_skew)
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
    backfilled = set(map(id, _newest(on_domain, source.backfill, trusted_until))) if first_poll else set()
    undated = 0
    for entry in on_domain:
        date = trusted_date(entry, trusted_until)
        if id(entry) in backfilled:
            pass
        elif date and date < oldest:
            result.dropped[f"older than {max_age_days} days"] += 1
            continue
        elif first_poll and date and date < created:
            result.dropped["published before you subscribed"] += 1
            result.left_out.append(entry)
            continue
        elif first_poll and not date and undated >= FIRST_FETCH_UNDATED:
            result.dropped[f"dated in the future beyond the feed's first {FIRST_FETCH_UNDATED} undated"
                           if entry.published else f"undated beyond the feed's first {FIRST_FETCH_UNDATED}"] += 1
            result.left_out.append(entry)
            continue
        if not date:
            # A second apart in the feed's order, so readers keep the feed's order and no two
            # entries claim the same instant.
            entry.ordered_at = rfc3339((backlog if first_poll else now) - undated)
            undated += 1
        result.kept.append(entry)
    return result


def history_entries(entries: list[Entry], source: Source, now: float, max_age_days: int,
                    future_skew: int = Settings.future_skew) -> Filtered:
    """An archive document's entries (RFC 5005 history): all kept whatever their dates, marked
    backfilled, but for those linking off the feed's host when the source says so. The undated
    ones, and those dated in the future, sit below the document's oldest dated entry, in the
    document's order: history never leads an aggregate as if new."""
    trusted_until = rfc3339(now + future_skew)
    dated = [date for e in entries if (date := trusted_date(e, trusted_until))]
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
        if not trusted_date(entry, trusted_until):
            entry.ordered_at = rfc3339(backlog - undated)
            undated += 1
        result.kept.append(entry)
    return result


def _newest(entries: list[Entry], count: int, trusted_until: str) -> list[Entry]:
    """The newest count entries: dated ones by date, then undated ones (and those dated in the
    future) in the feed's order."""
    count = count if isinstance(count, int) else 0  # a hand-edited item may hold anything
    if count <= 0:
        return []
    return sorted(entries, key=lambda e: trusted_date(e, trusted_until) or "", reverse=True)[:count]
