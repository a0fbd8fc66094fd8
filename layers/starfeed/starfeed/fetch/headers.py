"""What a response's headers say about time: when to retry (Retry-After) and how long it stays
fresh (Cache-Control max-age, Expires). Pure: the fetcher and the GitHub client read them."""

from __future__ import annotations

import email.utils
from collections.abc import Mapping


def seconds_until_http_date(value: str | None, now: float) -> float | None:
    """An HTTP date (RFC 9110 section 5.6.7) as seconds from now, 0 when it is past; None when unreadable."""
    try:
        when = email.utils.parsedate_to_datetime(value.strip()) if value else None
    except (TypeError, ValueError, OverflowError):
        return None
    return None if when is None else max(0.0, when.timestamp() - now)


def parse_retry_after(value: str | None, now: float, longest: float) -> float | None:
    """Retry-After in seconds or as an HTTP date (RFC 9110 section 10.2.3) -> seconds from now, at most
    `longest`: a hostile value cannot park a host for centuries."""
    if not value:
        return None
    seconds = float(value.strip()) if value.strip().isdigit() else seconds_until_http_date(value, now)
    return None if seconds is None else min(seconds, longest)  # past a float's range: the longest


def freshness(headers: Mapping[str, str], now: float, longest: float) -> float | None:
    """How long the response says it stays fresh (Cache-Control max-age, else Expires), at most
    `longest`: beyond the longest interval it could not change a decision anyway."""
    control = headers.get("Cache-Control", "").lower()
    if "no-cache" in control or "no-store" in control:
        return None
    for part in control.split(","):
        name, _, value = part.strip().partition("=")
        if name == "max-age" and value.strip().isdigit():
            return min(float(value), longest)
    # Expires is a date only (RFC 9111 section 5.3): "0" or any other invalid value means already expired.
    expires = seconds_until_http_date(headers.get("Expires"), now)
    return min(expires, longest) if expires else None
