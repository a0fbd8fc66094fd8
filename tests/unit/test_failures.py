"""Every failure named in words a user can act on: who refused a request (bot protection, with its
vendor, or a rate limit) from the answer's status, headers and page, the words of each class, and
the wait of a source its site refuses. Pure: no server."""

import random

import pytest
from requests.structures import CaseInsensitiveDict

from starfeed.fetch.headers import answer_failure, refusal
from starfeed.model import FailureClass, FetchOutcome, Source, document_failure, failure_words
from starfeed.schedule.decide import decide
from starfeed.settings import Settings

BLOCKED, RATE_LIMITED = FailureClass.BLOCKED, FailureClass.RATE_LIMITED
CF_CHALLENGE = (b'<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>'
                b'<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script>')
CF_BLOCK = (b"<!DOCTYPE html><title>Attention Required! | Cloudflare</title>"
            b"<h1 data-translate=\"block_headline\">Sorry, you have been blocked</h1>")
AKAMAI = (b"<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n"
          b"You don't have permission to access \"http://www.example.com/feed\" on this server.<P>\n"
          b"Reference&#32;&#35;18&#46;ef3a2f17&#46;1619133194&#46;15bcf105\n</BODY>\n</HTML>")
DATADOME = (b"<html><head><title>example.com</title></head><body><script>var dd={'rt':'c','cid':'AHrlqA',"
            b"'host':'geo.captcha-delivery.com'}</script></body></html>")
SUCURI = (b"<!DOCTYPE html><html><head><link rel=\"stylesheet\" href=\"https://cdn.sucuri.net/sucuri-firewall-block.css\">"
          b"<title>Sucuri WebSite Firewall - Access Denied</title></head></html>")
IMPERVA = (b'<html style="height:100%"><head><META NAME="ROBOTS" CONTENT="NOINDEX, NOFOLLOW"></head><body>'
           b'<iframe src="/_Incapsula_Resource?CWUDNSAI=9&incident_id=485000470549342814">Request unsuccessful. '
           b"Incapsula incident ID: 485000470549342814-1091780437566882554</iframe></body></html>")


@pytest.mark.parametrize("status, headers, body, expected", [
    # Cloudflare: its challenge header on any status; its pages with or without it.
    pytest.param(403, {"cf-mitigated": "challenge", "Server": "cloudflare", "CF-RAY": "8a1b-AMS"}, CF_CHALLENGE,
                 (BLOCKED, "Cloudflare", True), id="cloudflare managed challenge"),
    pytest.param(429, {"Cf-Mitigated": "challenge", "Server": "cloudflare"}, b"",
                 (BLOCKED, "Cloudflare", True), id="cloudflare challenge on a 429 is no rate limit"),
    pytest.param(503, {"Server": "cloudflare"}, CF_CHALLENGE, (BLOCKED, "Cloudflare", True),
                 id="cloudflare under-attack page"),
    pytest.param(403, {"Server": "cloudflare"}, CF_BLOCK, (BLOCKED, "Cloudflare", False), id="cloudflare block"),
    pytest.param(403, {"Server": "cloudflare", "CF-RAY": "8a1b-AMS"}, b"<h1>Forbidden</h1>", None,
                 id="the site's own 403 through cloudflare"),
    pytest.param(200, {"Server": "cloudflare", "CF-RAY": "8a1b-AMS"}, b"<rss/>", None, id="a feed cloudflare serves"),
    pytest.param(403, {"Server": "cloudflare"}, b'<html><h1>Members only</h1><script src="/cdn-cgi/challenge-platform/'
                 b'scripts/jsd/main.js"></script></html>', None, id="the site's 403 with cloudflare's page script"),
    # Akamai: its generic page is its block only behind its server header.
    pytest.param(403, {"Server": "AkamaiGHost", "Mime-Version": "1.0"}, AKAMAI, (BLOCKED, "Akamai", False),
                 id="akamai access denied"),
    pytest.param(403, {"Server": "AkamaiGHost"}, b"", (BLOCKED, "Akamai", False), id="akamai's 403 is its own"),
    pytest.param(200, {"Server": "AkamaiGHost"}, b"<rss/>", None, id="a feed akamai serves"),
    pytest.param(403, {"Server": "nginx"}, AKAMAI, None, id="an access denied page of no vendor"),
    # DataDome: its 403 is its own, with or without its page.
    pytest.param(403, {"X-DataDome": "protected", "X-DD-B": "1", "Set-Cookie": "datadome=abc; Path=/"}, DATADOME,
                 (BLOCKED, "DataDome", True), id="datadome captcha"),
    pytest.param(403, {"Set-Cookie": "datadome=abc; Max-Age=31536000; Domain=.example.com"}, b"",
                 (BLOCKED, "DataDome", True), id="datadome by its cookie"),
    pytest.param(200, {"X-DataDome": "protected"}, b"<rss/>", None, id="a feed datadome lets through"),
    # Sucuri.
    pytest.param(403, {"Server": "Sucuri/Cloudproxy", "X-Sucuri-ID": "12013", "X-Sucuri-Block": "EVA079"}, SUCURI,
                 (BLOCKED, "Sucuri", False), id="sucuri firewall"),
    pytest.param(403, {"X-Sucuri-ID": "11016"}, SUCURI, (BLOCKED, "Sucuri", False), id="sucuri page"),
    # Imperva (Incapsula): its headers are on every answer, so its page decides.
    pytest.param(403, {"X-Iinfo": "10-145080678-0 0NNN RT(1495689294935 1)", "X-CDN": "Incapsula",
                       "Set-Cookie": "incap_ses_123=abc; path=/"}, IMPERVA, (BLOCKED, "Imperva", True), id="imperva"),
    pytest.param(200, {"X-Iinfo": "21-162848-162850 NNYN", "X-CDN": "Incapsula"}, b"<rss/>", None,
                 id="a feed imperva serves"),
    # Other challenges.
    pytest.param(202, {"x-amzn-waf-action": "challenge"}, b"", (BLOCKED, "AWS WAF", True), id="aws waf challenge"),
    pytest.param(403, {}, b'<div id="px-captcha"></div>', (BLOCKED, "HUMAN (PerimeterX)", True), id="perimeterx"),
    pytest.param(403, {"Server": "ddos-guard"}, b"", (BLOCKED, "DDoS-Guard", False), id="ddos-guard"),
    pytest.param(403, {}, b"<p>Enable JavaScript and cookies to continue</p>", (BLOCKED, None, True),
                 id="a challenge of no known vendor"),
    # Rate limits.
    pytest.param(429, {"Retry-After": "600"}, b"Too Many Requests", (RATE_LIMITED, None, False), id="429"),
    pytest.param(429, {"Server": "snooserv"}, b"", (RATE_LIMITED, None, False), id="reddit's 429"),
    pytest.param(403, {"X-RateLimit-Remaining": "0"}, b"", (RATE_LIMITED, None, False), id="an exhausted limit's 403"),
    # Neither.
    pytest.param(401, {"WWW-Authenticate": "Basic"}, b"", None, id="401"),
    pytest.param(404, {}, b"", None, id="404"),
    pytest.param(503, {}, b"down", None, id="503"),
])
def test_who_refused_a_request(status, headers, body, expected):
    found = refusal(status, CaseInsensitiveDict(headers), body)
    assert (found and (found.failure, found.vendor, found.challenge)) == expected


@pytest.mark.parametrize("status, headers, retry_after, starts", [
    (403, {"cf-mitigated": "challenge"}, None,
     "blocked by bot protection (Cloudflare): 403 Forbidden with a challenge page meant for a browser"),
    (403, {"Server": "AkamaiGHost"}, None, "blocked by bot protection (Akamai): 403 Forbidden with its block page"),
    (429, {}, 600, "rate-limited by the site: 429 Too Many Requests from example.org, asking for 10 min of quiet"),
    (429, {}, None, "rate-limited by the site: 429 Too Many Requests from example.org"),
    (401, {}, None, "needs credentials: 401 Unauthorized, the feed asks for a login"),
    (403, {}, None, "needs credentials: 403 Forbidden, the server refuses starfeed, without a challenge page"),
    (404, {}, None, "gone: 404 Not Found, nothing at this URL any more; check it or remove the source"),
    (410, {}, None, "gone: 410 Gone, the publisher removed this feed for good"),
    (503, {}, None, "server error: 503 Service Unavailable, example.org is down or overloaded"),
    (500, {}, None, "server error: 500 Internal Server Error from example.org"),
    (418, {}, None, "refused by the server: 418 I'm a Teapot from example.org"),
])
def test_each_answer_has_words_a_user_can_act_on(status, headers, retry_after, starts):
    body = AKAMAI if headers.get("Server") == "AkamaiGHost" else b""
    failure, words = answer_failure(status, CaseInsensitiveDict(headers), body, "example.org", retry_after)
    assert words.startswith(starts) and words.startswith(failure.words)
    assert failure_words(failure, words) == starts.split(": ", 1)[0]


def test_a_served_document_is_no_failure():
    assert answer_failure(200, CaseInsensitiveDict({"Server": "cloudflare"}), b"<rss/>", "example.org") is None


@pytest.mark.parametrize("failure, error, words", [
    (FailureClass.BLOCKED, "blocked by bot protection (DataDome): 403 Forbidden with ...",
     "blocked by bot protection (DataDome)"),
    (FailureClass.TIMEOUT, "timed out: the response was still arriving ...", "timed out"),
    (FailureClass.ROBOTS, "refused by robots.txt: disallowed by https://example.org/robots.txt (not fetched)",
     "refused by robots.txt"),
    (FailureClass.OURS, "store: Throttling: slow down", "failed on starfeed's side"),  # a stage's words
    (FailureClass.NETWORK, "refused: 10.0.0.1 is a private address", "could not connect"),
    ("4xx-edited-by-hand", "whatever", None),
    (None, None, None),
])
def test_a_failure_in_a_few_words(failure, error, words):
    assert failure_words(failure, error) == words


def test_every_class_has_words_and_a_metric_the_bill_affords():
    assert all(c.words for c in FailureClass)
    assert {c.metric for c in FailureClass} == {"starfeed", "4xx", "5xx", "network", "content"}
    assert [c for c in FailureClass if c.refusing] == [BLOCKED, RATE_LIMITED]


def test_an_html_page_is_not_a_feed():
    assert document_failure("not a feed: an HTML page; the feed found on it is https://e.org/f") == \
        FailureClass.NOT_A_FEED
    assert document_failure("empty response: the server sent no document") == FailureClass.CONTENT


SETTINGS = Settings()
NOW = 1_800_000_000.0


def _after(failure, failures_before=0, retry_after=None, interval=900):
    source = Source(source_id="s", url="https://example.org/feed", interval=interval,
                    consecutive_failures=failures_before)
    outcome = FetchOutcome(403, error="refused", failure=failure, retry_after=retry_after)
    return decide(source, outcome, SETTINGS, NOW, random.Random(1))


def test_a_refused_source_waits_on_its_own_schedule_never_hammering_the_site():
    blocked = [_after(BLOCKED, n) for n in range(4)]
    assert [d.reason for d in blocked] == ["blocked-backoff"] * 4
    waits = [d.next_check_at - NOW for d in blocked]
    assert 6 * 3600 * 0.85 <= waits[0] <= 6 * 3600 * 1.15  # hours, not the interval's minutes
    assert waits[3] <= SETTINGS.backoff_cap * 1.15 and waits[2] > waits[0]
    limited = _after(RATE_LIMITED)
    assert limited.reason == "rate-limited-backoff" and limited.next_check_at - NOW >= 3600 * 0.85
    plain = _after(FailureClass.SERVER)  # the usual backoff: twice the interval
    assert plain.reason == "error-backoff" and plain.next_check_at - NOW <= 2 * 900 * 1.15


def test_a_rate_limits_retry_after_is_its_least_wait():
    longer = _after(RATE_LIMITED, retry_after=7200.0)
    assert (longer.reason, longer.next_check_at) == ("retry-after", NOW + 7200)  # exactly, as the site asked
    shorter = _after(RATE_LIMITED, retry_after=5.0)  # asking again in 5 s would hammer it
    assert shorter.reason == "rate-limited-backoff" and shorter.next_check_at - NOW >= 3600 * 0.85


def test_status_counts_the_failing_sources_by_cause():
    from starfeed.model import Status
    from starfeed.status import failing_by_cause

    def failing(n, failure, error, **fields):
        return Source(source_id=f"s{n}", url=f"https://e{n}.org/f", status=Status.ERROR, failure=failure,
                      last_error=error, **fields)

    sources = [failing(1, BLOCKED, "blocked by bot protection (Cloudflare): 403 Forbidden with ..."),
               failing(2, BLOCKED, "blocked by bot protection (Cloudflare): 503 Service Unavailable with ..."),
               failing(3, RATE_LIMITED, "rate-limited by the site: 429 Too Many Requests from e3.org"),
               failing(4, FailureClass.TIMEOUT, "timed out: ...", deleted_at=1.0),  # removed: not counted
               failing(5, None, "an error stored before failures had classes"),
               Source(source_id="ok", url="https://ok.org/f", status=Status.OK)]
    assert failing_by_cause(sources) == [("blocked by bot protection (Cloudflare)", 2),
                                         ("rate-limited by the site", 1), ("failing, cause unrecorded", 1)]
