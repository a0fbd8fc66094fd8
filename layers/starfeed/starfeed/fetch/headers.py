"""What a response's headers say: when to retry (Retry-After), how long it stays fresh
(Cache-Control max-age, Expires), and whether bot protection or a rate limit refused the request
(with the vendor, from its headers and its page's start). Pure: the fetcher and the GitHub client
read them."""

from __future__ import annotations

import email.utils
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus

from starfeed.model import FailureClass, failure_class


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


# Who refused a request, from its answer: bot protection (a challenge a browser solves, or a block
# page) or a rate limit. A vendor's headers come on every answer it fronts, served pages included,
# so they name the vendor only of an error status, and a plain 403 through a vendor is the site's
# own refusal (needs credentials) unless a header or the page's start says it is the vendor's.
BODY_SNIFF = 4096  # bytes of the body's start read for a vendor's page


@dataclass(frozen=True)
class Refusal:
    failure: FailureClass  # BLOCKED or RATE_LIMITED
    vendor: str | None = None
    challenge: bool = False  # a page a browser solves (a script, a captcha), not a plain block


# (vendor, header name, what its value contains ("" for any), a challenge?): each header alone says
# the answer is the vendor's refusal, whatever its status (AWS WAF challenges with a 202).
_REFUSING_HEADERS = (
    ("Cloudflare", "cf-mitigated", "challenge", True),
    ("Sucuri", "x-sucuri-block", "", False),
    ("DataDome", "x-dd-b", "", True),
    ("AWS WAF", "x-amzn-waf-action", "", True),
    ("Vercel", "x-vercel-mitigated", "", True),
)
# (vendor, header name, what its value contains): each header names the vendor in front of a site.
_FRONTING_HEADERS = (
    ("Cloudflare", "server", "cloudflare"), ("Cloudflare", "cf-ray", ""),
    ("Akamai", "server", "akamaighost"), ("Sucuri", "x-sucuri-id", ""), ("Sucuri", "server", "sucuri"),
    ("DataDome", "x-datadome", ""), ("DataDome", "set-cookie", "datadome="),
    ("Imperva", "x-iinfo", ""), ("Imperva", "x-cdn", "incapsula"), ("Imperva", "set-cookie", "incap_ses"),
    ("DDoS-Guard", "server", "ddos-guard"),
)
# The vendors whose 403 is their own whatever its page: their edge answers it, not the site behind.
_THEIR_OWN_403 = {"Akamai", "Sucuri", "DataDome", "DDoS-Guard"}
# (vendor, what the page's start holds (lowercase), a challenge?, names the vendor alone?): a refusal's
# page; a marker other servers use too names the vendor only with its headers in front.
_PAGES = (
    ("Cloudflare", b"<title>just a moment...</title>", True, True),
    # Its challenge's own script and settings: the challenge platform's other scripts ride on
    # pages it serves (/cdn-cgi/challenge-platform/scripts/...).
    ("Cloudflare", b"/cdn-cgi/challenge-platform/h/", True, True), ("Cloudflare", b"_cf_chl_opt", True, True),
    ("Cloudflare", b"attention required! | cloudflare", False, True),
    ("Cloudflare", b"sorry, you have been blocked", False, False),
    ("Akamai", b"access denied", False, False), ("Akamai", b"errors.edgesuite.net", False, True),
    ("DataDome", b"captcha-delivery.com", True, True),
    ("Sucuri", b"sucuri website firewall", False, True),
    ("Imperva", b"_incapsula_resource", True, True), ("Imperva", b"incapsula incident id", False, True),
    ("HUMAN (PerimeterX)", b"px-captcha", True, True),
    (None, b"enable javascript and cookies to continue", True, False),
)


def refusal(status: int, headers: Mapping[str, str], body: bytes) -> Refusal | None:
    """Bot protection's or a rate limit's refusal, from an answer's status, headers (a mapping
    whose names match whatever their case, as requests' headers do) and its body's start; None
    for any other answer."""

    def header(name: str, contains: str) -> bool:
        value = headers.get(name)
        return value is not None and contains in value.lower()

    for vendor, name, contains, challenge in _REFUSING_HEADERS:
        if header(name, contains):
            return Refusal(FailureClass.BLOCKED, vendor, challenge)
    if status < 400:
        return None
    sniffed = body[:BODY_SNIFF].lower()
    fronting = next((vendor for vendor, name, contains in _FRONTING_HEADERS if header(name, contains)), None)
    if status in (403, 429, 503):
        for vendor, marker, challenge, alone in _PAGES:
            if marker in sniffed and (alone or vendor in (None, fronting)):
                return Refusal(FailureClass.BLOCKED, vendor or fronting, challenge)
        if status == 403 and fronting in _THEIR_OWN_403:
            return Refusal(FailureClass.BLOCKED, fronting, fronting == "DataDome")  # DataDome's is a captcha
    exhausted = headers.get("Retry-After") or headers.get("X-RateLimit-Remaining") == "0"
    if status == 429 or (status == 403 and exhausted):  # GitHub's limits answer 403 too
        return Refusal(FailureClass.RATE_LIMITED, fronting)
    return None


def answer_failure(status: int, headers: Mapping[str, str], body: bytes, host: str,
                   retry_after: float | None = None) -> tuple[FailureClass, str] | None:
    """What an answer that is no document is, and its words a user can act on (they start with
    its class's words, the vendor after them when known); None for an answer to read. Pure."""
    refused = refusal(status, headers, body)
    said = _status_text(status)
    if refused is not None and refused.failure is FailureClass.BLOCKED:
        vendor = f" ({refused.vendor})" if refused.vendor else ""
        page = "a challenge page meant for a browser, which starfeed does not solve" if refused.challenge else \
            "its block page"
        return refused.failure, f"{refused.failure.words}{vendor}: {said} with {page}"
    if refused is not None:
        asked = f", asking for {duration(retry_after)} of quiet" if retry_after else ""
        return refused.failure, f"{refused.failure.words}: {said} from {host}{asked}"
    if status < 400:
        return None
    failure = failure_class(status)
    detail = _DETAILS.get(status)
    return failure, f"{failure.words}: {said}" + (f", {detail.format(host=host)}" if detail else f" from {host}")


# What a status says a user can do, after its class's words and the status.
_DETAILS = {
    401: "the feed asks for a login starfeed does not have",
    403: "the server refuses starfeed, without a challenge page: a private feed's URL may need its token, "
         "or the site a login",
    404: "nothing at this URL any more; check it or remove the source",
    407: "the proxy refuses its credentials: give its user:password@ again (`source set ID --proxy URL`; "
         "STARFEED_PROXY's: `starfeed proxy set URL`)",
    410: "the publisher removed this feed for good",
    503: "{host} is down or overloaded",
}


def _status_text(status: int) -> str:
    """ "403 Forbidden"; "HTTP 599" for a status without a name."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def duration(seconds: float) -> str:
    """A wait in words: "45 s", "10 min", "6 h"."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"
