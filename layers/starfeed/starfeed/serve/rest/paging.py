"""A page's URL and its Link header. Its cursor is starfeed.cursors' (encode_keys): the keys the
next page starts after, and which list it belongs to."""

from __future__ import annotations

from urllib.parse import urlencode


def page_url(base: str, path: str, query: dict[str, object]) -> str:
    """A page's absolute URL: the same query, with the cursor of the page it names."""
    kept = {k: v for k, v in query.items() if v is not None}
    return f"{base.rstrip('/')}{path}" + (f"?{urlencode(kept)}" if kept else "")


def link_header(next_url: str | None) -> dict[str, str]:
    return {"Link": f'<{next_url}>; rel="next"'} if next_url else {}
