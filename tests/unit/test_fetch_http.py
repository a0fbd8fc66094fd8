"""The fetcher against real HTTP servers on loopback."""

import email.utils
import gzip
import socket
import threading
import time

import pytest

from starfeed import USER_AGENT
from starfeed.fetch.http import fetch
from starfeed.model import FailureClass
from starfeed.settings import Settings

from origin import Reply, rss

SETTINGS = Settings(connect_timeout=2, read_timeout=2, fetch_deadline=3, max_body_bytes=1 << 20,
                    retry_backoff=0.01, allow_private_networks="127.0.0.0/8")


def test_conditional_get_sends_validators_and_an_honest_user_agent(origin):
    url = origin.serve("/f", Reply(304, headers={"ETag": '"v1"'}))
    result = fetch(url, SETTINGS, etag='"v1"', last_modified="Fri, 20 Nov 2026 08:00:00 GMT")
    assert result.not_modified and result.error is None
    sent = origin.hits("/f")[0]
    assert sent["if-none-match"] == '"v1"'
    assert sent["if-modified-since"] == "Fri, 20 Nov 2026 08:00:00 GMT"
    assert sent["user-agent"] == USER_AGENT and "starfeed" in USER_AGENT and "http" in USER_AGENT


def test_header_names_are_matched_whatever_their_case(origin):
    url = origin.serve("/lower",
                       Reply(429, headers={"etag": '"v2"', "retry-after": "90", "cache-control": "max-age=60"}))
    result = fetch(url, SETTINGS)
    assert result.headers.get("ETag") == '"v2"' and result.headers["Cache-Control"] == "max-age=60"
    assert result.retry_after == 90


def test_gzip_bodies_are_decoded(origin):
    body = rss(("a", "A"))
    url = origin.serve("/gz", Reply(200, gzip.compress(body), {"Content-Encoding": "gzip"}))
    assert fetch(url, SETTINGS).body == body


@pytest.mark.parametrize("status, words", [
    (401, "credentials"), (403, "refuses"), (404, "no longer|Not Found"), (410, "Gone"),
    (500, "server error"), (503, "down or overloaded")])
def test_each_status_has_its_own_reason(origin, status, words):
    result = fetch(origin.serve("/s", Reply(status, b"no")), SETTINGS)
    assert result.status == status
    assert any(w in result.error for w in words.split("|"))


def test_retry_after_in_seconds_and_as_a_date(origin):
    assert fetch(origin.serve("/a", Reply(429, headers={"Retry-After": "120"})), SETTINGS).retry_after == 120
    later = email.utils.formatdate(time.time() + 600, usegmt=True)
    waited = fetch(origin.serve("/b", Reply(503, headers={"Retry-After": later})), SETTINGS).retry_after
    assert 590 <= waited <= 600


def test_a_body_over_the_limit_is_not_read(origin):
    result = fetch(origin.serve("/big", Reply(200, b"x" * (2 << 20))), SETTINGS)
    assert "larger than" in result.error and result.body == b""


def test_a_gzip_bomb_stops_at_the_decompressed_limit(origin):
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB inflating from about 64 KiB
    assert len(bomb) < 1 << 20
    result = fetch(origin.serve("/bomb", Reply(200, bomb, {"Content-Encoding": "gzip"})), SETTINGS)
    assert "larger than" in result.error


def test_a_redirect_loop_is_reported(origin):
    origin.serve("/loop", Reply(301, headers={"Location": "/loop2"}))
    origin.serve("/loop2", Reply(301, headers={"Location": "/loop"}))
    assert "redirects" in fetch(origin.url + "/loop", SETTINGS).error


def test_a_trickling_server_hits_the_total_deadline(origin):
    url = origin.serve("/slow", Reply(200, b"x" * 64 * 1024, chunk_delay=0.1))  # 6.4 s to send
    result = fetch(url, SETTINGS)
    assert result.error.startswith("timed out") and result.failure == FailureClass.TIMEOUT
    assert origin.completed == []  # abandoned mid-body, not read to the end


def test_a_body_cut_short_by_the_deadline_is_a_timeout_not_a_document():
    """A server sending a byte at a time without a Content-Length: the shut socket ends the body
    as if it were whole, and only the deadline says it was not."""
    body = rss(("a", "A"))
    sent = []
    url, stop = _raw_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\nConnection: close\r\n\r\n",
                            body, 0.2, sent)
    try:
        result = fetch(url, SETTINGS)
    finally:
        stop.set()
    assert result.status == 200 and result.failure == FailureClass.TIMEOUT and not result.transient
    assert result.error.startswith("timed out: the response was still arriving")
    assert 0 < len(result.body) < len(body)  # what arrived is kept for the raw record


def _raw_server(head: bytes, body: bytes, pause: float, sent: list) -> tuple[str, threading.Event]:
    """A server that sends its head at once, then its body a byte every `pause` seconds."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def trickle():
        connection, _ = listener.accept()
        with connection:
            connection.sendall(head)
            for byte in body:
                if stop.wait(pause):
                    break
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    break
                sent.append(byte)
        listener.close()

    threading.Thread(target=trickle, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/feed", stop


def test_a_server_trickling_its_headers_hits_the_total_deadline():
    """Each byte comes before the read timeout, so only the fetch's own deadline ends it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop, sent = threading.Event(), []
    head = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000  # 500 s at a byte every 0.5 s

    def trickle():
        connection, _ = listener.accept()
        with connection:
            for byte in head:
                if stop.wait(0.5):
                    return
                connection.sendall(bytes([byte]))
                sent.append(byte)

    threading.Thread(target=trickle, daemon=True).start()
    try:
        result = fetch(f"http://127.0.0.1:{listener.getsockname()[1]}/feed", SETTINGS)
    finally:
        stop.set()
        listener.close()
    assert result.error == (f"timed out: no whole answer within the fetch's {SETTINGS.fetch_deadline:g} s "
                            "deadline: abandoned")
    assert result.failure == FailureClass.TIMEOUT
    assert not result.transient  # not retried: the next window tries again
    assert 0 < len(sent) < len(head)  # abandoned while the headers were still arriving


@pytest.mark.parametrize("value", ["9" * 400, "99999999999", "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_a_retry_after_beyond_a_day_waits_a_day(origin, value):
    result = fetch(origin.serve("/huge", Reply(429, headers={"Retry-After": value})), SETTINGS)
    assert result.retry_after == SETTINGS.backoff_cap


def test_an_unreachable_host_is_a_connection_error():
    result = fetch("http://127.0.0.1:9/feed", SETTINGS)
    assert result.status is None and result.error.startswith("could not connect")
    assert result.failure == FailureClass.NETWORK


def test_a_name_that_does_not_resolve_says_so():
    result = fetch("http://no-such-host.invalid/feed", SETTINGS)
    assert result.failure == FailureClass.DNS and result.error.startswith("the name does not resolve")


def test_a_failed_tls_handshake_is_tls_not_a_connection_fault():
    """A server that answers the handshake in plain text fails it as a refused certificate does."""
    url, stop = _raw_server(b"HTTP/1.1 400 Bad Request\r\n\r\n", b"", 0, [])
    try:
        result = fetch(url.replace("http://", "https://"), SETTINGS, sleep=lambda s: None)
    finally:
        stop.set()
    assert result.failure == FailureClass.TLS and result.error.startswith("TLS certificate refused")
    assert not result.transient  # not retried: a certificate does not mend in a second


def test_a_challenge_is_not_retried_and_its_page_is_kept(origin):
    page = b"<!DOCTYPE html><html><head><title>Just a moment...</title></head></html>"
    url = origin.serve("/cf", Reply(503, page, {"cf-mitigated": "challenge", "Server": "cloudflare"}))
    result = fetch(url, SETTINGS, sleep=lambda s: None)
    assert (result.failure, result.transient, result.body) == (FailureClass.BLOCKED, False, page)
    assert result.error.startswith("blocked by bot protection (Cloudflare): 503 Service Unavailable")
    assert len(origin.hits("/cf")) == 1  # one request: a retry only asks the site again


def test_brotli_bodies_are_decoded(origin):
    import brotli

    body = rss(("b", "B"))
    url = origin.serve("/br", Reply(200, brotli.compress(body), {"Content-Encoding": "br"}))
    assert fetch(url, SETTINGS).body == body


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1",
                                  "127.1", "[::ffff:127.0.0.1]", "localhost", "[::1]"])
def test_loopback_in_every_spelling_is_refused_before_any_request(origin, host):
    port = origin.url.rsplit(":", 1)[1]
    result = fetch(f"http://{host}:{port}/f", Settings(retry_backoff=0.01))
    assert result.error.startswith(("refused", "could not resolve")), result.error
    assert result.status is None and origin.requests == []


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/",
                                 "http://100.64.0.1/", "http://[fe80::1]/", "http://0.0.0.0/",
                                 "http://224.0.0.1/", "file:///etc/passwd", "gopher://x/"])
def test_private_metadata_and_odd_schemes_are_refused(url):
    assert fetch(url, Settings(retry_backoff=0.01)).error.startswith("refused")


def test_a_redirect_to_a_private_address_is_refused(origin):
    origin.serve("/jump", Reply(302, headers={"Location": "http://169.254.169.254/latest/"}))
    result = fetch(origin.url + "/jump", SETTINGS)
    assert result.error.startswith("refused") and "169.254.169.254" in result.error


def test_redirect_chains_are_followed_and_permanent_ones_reported(origin):
    origin.serve("/a", Reply(301, headers={"Location": "/b"}))
    origin.serve("/b", Reply(308, headers={"Location": origin.url + "/c"}))
    origin.serve("/c", Reply(200, rss(("c", "C"))))
    result = fetch(origin.url + "/a", SETTINGS)
    assert (result.status, result.url, result.permanent_redirect) == (200, origin.url + "/c",
                                                                     origin.url + "/c")
    origin.serve("/t", Reply(302, headers={"Location": "/c"}))
    assert fetch(origin.url + "/t", SETTINGS).permanent_redirect is None  # temporary: stay


def test_five_redirects_are_followed_six_are_too_many(origin):
    for n in range(6):
        origin.serve(f"/r{n}", Reply(302, headers={"Location": f"/r{n + 1}"}))
    origin.serve("/r6", Reply(200, b"done"))
    assert "redirects" in fetch(origin.url + "/r0", SETTINGS).error
    assert fetch(origin.url + "/r1", SETTINGS).body == b"done"


def test_server_errors_are_retried_three_times_with_backoff(origin):
    url = origin.serve("/flaky", Reply(500), Reply(502), Reply(200, b"ok"))
    pauses = []
    result = fetch(url, SETTINGS, sleep=pauses.append)
    assert (result.status, result.body, len(origin.hits("/flaky"))) == (200, b"ok", 3)
    assert pauses == [0.01, 0.02]
    origin.serve("/down", Reply(500))
    assert fetch(origin.url + "/down", SETTINGS, sleep=lambda s: None).status == 500
    assert len(origin.hits("/down")) == 4  # one try and three retries


def test_a_503_with_retry_after_is_not_retried(origin):
    url = origin.serve("/busy", Reply(503, headers={"Retry-After": "60"}))
    assert fetch(url, SETTINGS).retry_after == 60 and len(origin.hits("/busy")) == 1


def test_a_validator_too_long_to_keep_is_not_kept(origin):
    long_tag = '"' + "e" * 2000 + '"'
    headers = {"ETag": long_tag, "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"}
    result = fetch(origin.serve("/long-etag", Reply(200, rss(("a", "A")), headers)), SETTINGS)
    assert result.validators == (None, "Mon, 01 Jan 2024 00:00:00 GMT")
