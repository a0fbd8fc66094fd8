"""The failure policies every kind of source follows, in one place: the circuit breaker, one
strike, polling off, and the wait of a source its site refuses (docs/design.md#failure-policy). Pure."""

from __future__ import annotations

from starfeed.model import FailureClass, Policy
from starfeed.settings import Settings


def parked(failures: int, policy: Policy | str, settings: Settings) -> str | None:
    """Why a source that has now failed `failures` times in a row leaves the schedule until
    `source sync`, or None while it stays on it: the circuit breaker opens after
    settings.circuit_breaker failures whatever the policy; one strike parks it at the first."""
    if failures >= settings.circuit_breaker:
        return f"circuit-open after {failures} failures"
    if policy == Policy.ONE_STRIKE:
        return "one-strike"
    return None


def rearmed(polling: bool, at: float | None) -> float | None:
    """The next check as decided, unless polling is off: then the fetch just made was the last."""
    return at if polling else None


# A site that refuses starfeed (bot protection; a rate limit, docs/design.md#refused) is asked
# again only after this long, doubling with each refusal in a row up to the backoff cap: the usual
# backoff starts at the source's interval, minutes, which against a block only hammers the site.
REFUSED_WAITS = {FailureClass.BLOCKED: 6 * 3600, FailureClass.RATE_LIMITED: 3600}


def refused_wait(failure: FailureClass | None, failures: int, settings: Settings) -> float | None:
    """The wait after the `failures`-th failure in a row of a source its site refuses; None when
    the site did not refuse it (the usual backoff holds)."""
    first = REFUSED_WAITS.get(failure) if failure is not None else None
    if first is None:
        return None
    return float(min(first * 2 ** min(max(failures - 1, 0), 32), settings.backoff_cap))
