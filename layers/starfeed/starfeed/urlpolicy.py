"""One URL policy for everything starfeed emits, and the redaction of credentials in the URLs it
shows. Pure.

Feeds are hostile: a channel link, an item link, an enclosure or an author's URI may be
`javascript:`, `data:` or `vbscript:`. Whatever starfeed writes into a feed, a page or an OPML
file passes `safe_link` first; whatever shows a subscription URL to the public passes `redact`.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

WEB_SCHEMES = frozenset({"http", "https"})
# Where a format has a place for an address rather than a page (an author's URI), mailto: is fine.
WEB_AND_MAIL = WEB_SCHEMES | {"mailto"}

# Query parameters that carry a credential in the URLs people subscribe to: any name holding one
# of these (apiToken, access_key, passkey, X-Amz-Signature...), and a few short names exactly.
_SECRET_PARTS = ("token", "key", "secret", "pass", "pwd", "auth", "sig", "credential", "session")
_SECRET_NAMES = frozenset({"sid", "code", "hash"})
REDACTED = "REDACTED"
_UNSAFE_CHARS = re.compile(r"[\x00-\x20\x7f\\\ufffe\uffff\ud800-\udfff]")


def safe_link(url: str | None, base: str | None = None, schemes: frozenset[str] = WEB_SCHEMES) -> str | None:
    """url made absolute against base, if its scheme is allowed and it has a host (mailto has
    none); else None. Control characters, spaces and backslashes make a URL unsafe: browsers and
    parsers read such URLs differently."""
    if not url or not isinstance(url, str):
        return None
    url = url.strip()
    if not url or _UNSAFE_CHARS.search(url):
        return None
    try:
        absolute = urljoin(base, url) if base else url
        parts = urlsplit(absolute)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in schemes:
        return None
    if scheme != "mailto" and not parts.hostname:
        return None
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, parts.fragment))


def redact(url: str | None) -> str | None:
    """The URL as the public may see it: no userinfo, no fragment (never sent to a server, so never
    needed to subscribe, and a place tokens travel in), and the values of credential-like
    parameters (token, key, apikey, secret, auth, sig, password, ...) replaced, in the query
    whether `&` or `;` separates them, and in a path segment's `;name=value` parameters."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        if ":" in host:
            host = f"[{host}]"
        netloc = host + (f":{port}" if port else "")
    path = "/".join(_redact_parameters(segment, ";") for segment in parts.path.split("/"))
    return urlunsplit((parts.scheme, netloc, path, _redact_parameters(parts.query, ""), ""))


_PARAMETER = re.compile(r"(?P<name>[^&;=/]+)=(?P<value>[^&;/]*)")


def _redact_parameters(text: str, after: str) -> str:
    """name=value pairs in text (from the first `after` on, when given) with secret values replaced."""
    head, separator, tail = text.partition(after) if after else ("", "", text)
    if after and not separator:
        return text
    tail = _PARAMETER.sub(lambda m: f"{m['name']}={REDACTED}" if is_secret(unquote(m["name"])) else m[0], tail)
    return head + separator + tail


def is_secret(name: str) -> bool:
    """Whether a query parameter of this name carries a credential."""
    lowered = name.lower()
    return lowered in _SECRET_NAMES or any(part in lowered for part in _SECRET_PARTS)
