"""One spelling of a URL (docs/design.md#canonical-links), read alike by every parser, or a refusal
that says why. Pure."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from urllib3.util import parse_url

from starfeed.fetch.guard import Refused, canonical

DEFAULT = {"http": 80, "https": 443}


@pytest.mark.parametrize("url, expected", [
    ("HTTP://Example.COM", "http://example.com/"),
    ("http://fußball.test/a?b#frag", "http://xn--fuball-cta.test/a?b"),  # UTS 46, not fussball
    ("https://example.com:443/x", "https://example.com/x"),
    ("http://example.com:08080/x", "http://example.com:8080/x"),
    ("http://example.com:/x", "http://example.com/x"),
    ("http://user:p%40ss@example.com/x", "http://example.com/x"),
    ("http://[::FFFF:127.0.0.1]:81/", "http://[::ffff:7f00:1]:81/"),
    ("http://my_blog.example/", "http://my_blog.example/"),
    ("http://2130706433/", "http://2130706433/"),  # an address spelling: judged where it connects
    ("http://example.com?q", "http://example.com/?q"),
])
def test_canonical_spellings(url, expected):
    assert canonical(url).url == expected


def test_userinfo_is_kept_apart_for_basic_auth():
    target = canonical("http://reader:p%40ss:w@Example.com:8080/feed")
    assert (target.url, target.origin, target.userinfo) == (
        "http://example.com:8080/feed", ("http", "example.com", 8080), ("reader", "p@ss:w"))


@pytest.mark.parametrize("url, words", [
    ("http://127.0.0.1:4210\\@public.test/", "backslash"),
    ("http://example.com/a\\b", "backslash"),
    ("http://exa mple.com/", "whitespace"),
    ("http://example.com/\tx", "whitespace"),
    (" http://example.com/", "whitespace"),
    ("http://example.com/\x00", "control"),
    ("http://example.com/\x85", "control"),
    ("http://a@b@example.com/", "more than one '@'"),
    ("http://ex%61mple.com/", "percent-encoded"),
    ("http:///path", "no host"),
    ("http://user@/path", "no host"),
    ("http:example.com", "no host"),
    ("http://example.com:8o/", "port"),
    ("http://example.com:0/", "port"),
    ("http://example.com:65536/", "port"),
    ("http://example.com:1:2/", "port"),
    ("ftp://example.com/", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("http://a..b/", "not a valid domain name"),
    ("http://xn--zz.test/", "not a valid domain name"),
    ("http://[fe80::1%25eth0]/", "IPv6"),
    ("http://[::1/", "IPv6"),
    ("http://[::1]x/", "IPv6"),
])
def test_urls_parsers_read_differently_are_refused(url, words):
    with pytest.raises(Refused, match="^refused: .*" + words.replace("(", r"\(")):
        canonical(url)


def test_a_location_is_joined_first_and_judged_as_given():
    assert canonical("../b?x", base="http://example.com/feeds/a").url == "http://example.com/b?x"
    assert canonical("//other.test/f", base="https://example.com/").url == "https://other.test/f"
    with pytest.raises(Refused, match="whitespace"):  # urljoin would have dropped the tab
        canonical("http://exa\tmple.com/", base="http://example.com/")
    with pytest.raises(Refused, match="backslash"):  # WHATWG: //127.0.0.1/, scheme-relative
        canonical("\\\\127.0.0.1/", base="http://example.com/")


# Properties, over URLs built from the pieces parsers disagree on.

_TRICKY = "\\@:%[]./?#\t \x00\x7fß" + "aZ09-_"
hosts = st.one_of(
    st.from_regex(r"[a-zA-Z0-9][a-zA-Z0-9-]{0,10}(\.[a-zA-Z0-9][a-zA-Z0-9-]{0,10}){0,3}\.?", fullmatch=True),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12),
    st.ip_addresses().map(lambda ip: f"[{ip}]" if ip.version == 6 else str(ip)),
    st.text(alphabet=_TRICKY, min_size=0, max_size=12),
)
urls = st.one_of(
    st.builds(lambda scheme, userinfo, host, port, path: f"{scheme}://{userinfo}{host}{port}{path}",
              st.sampled_from(["http", "https", "HTTP", "hTtPs", "ftp", "http:", "h\\ttp"]),
              st.one_of(st.just(""), st.text(alphabet=_TRICKY, max_size=8).map(lambda u: u + "@")),
              hosts,
              st.one_of(st.just(""), st.integers(0, 70000).map(lambda p: f":{p}"),
                        st.text(alphabet=_TRICKY, max_size=6).map(lambda p: ":" + p)),
              st.text(alphabet=_TRICKY + "/", max_size=20)),
    st.text(max_size=40).map(lambda rest: "http://" + rest),
)


def _agreed(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) as urllib3 (what connects) and urlsplit (the rest) read url."""
    ours, theirs = urlsplit(url), parse_url(url)
    assert ours.hostname == (theirs.host or "").strip("[]").lower()
    assert (ours.port or DEFAULT[ours.scheme]) == (theirs.port or DEFAULT[theirs.scheme])
    assert ours.scheme == theirs.scheme
    return ours.scheme, f"[{ours.hostname}]" if ":" in ours.hostname else ours.hostname, \
        ours.port or DEFAULT[ours.scheme]


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(urls)
def test_canonical_urls_are_stable_plain_and_read_alike(url):
    try:
        target = canonical(url)
    except Refused as exc:
        assert str(exc).startswith("refused: ")
        return
    out = target.url
    assert canonical(out).url == out  # idempotent
    assert not any(c.isspace() or ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c == "\\" for c in out)
    assert "@" not in urlsplit(out).netloc and parse_url(out).auth is None  # no userinfo
    assert target.origin[1].isascii() and target.origin[1] == target.origin[1].lower()
    assert _agreed(out) == target.origin
