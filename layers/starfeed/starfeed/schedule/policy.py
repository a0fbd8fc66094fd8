"""The failure policies every kind of source follows, in one place: the circuit breaker, one
strike, and polling off (docs/design.md#failure-policy). Pure."""

from __future__ import annotations

from starfeed.model import Policy
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
