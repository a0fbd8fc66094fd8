"""Each feed in tests/data/normalize has its expected entries beside it (*.expected.json): two
written for starfeed's rules, and 35 from ../shared/corpora/real-feeds chosen for their traits
(RSS 0.91, 0.92, 1.0 and 2.0, Atom, JSON Feed; xml:base and relative links, CDATA, non-UTF-8
encodings, content:encoded, XHTML content, media RSS, podcast enclosures, missing ids, titles
and dates, several authors, an "email (Name)" author feedparser splits wrongly)."""

import hashlib
import json
from pathlib import Path

import pytest

from starfeed.parse.feed import parse_feed
from starfeed.parse.normalize import normalize_entries, struct_to_rfc3339

DATA = Path(__file__).resolve().parent.parent / "data" / "normalize"
NOW = 1_795_262_400.0
CASES = sorted(p for p in DATA.iterdir() if not p.name.endswith((".expected.json", ".md")))


def normalized(path: Path):
    feed_url = "https://news.example.net/feed" if path.suffix == ".xml" else "https://blog.example.com/feed"
    parsed = parse_feed(path.read_bytes(), feed_url)
    assert parsed.error is None
    return normalize_entries(parsed.entries, "src", feed_url, NOW), feed_url


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_expected_entries(path):
    entries, _ = normalized(path)
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text())
    assert len(entries) == len(expected)
    for entry, want in zip(entries, expected):
        assert {field: getattr(entry, field) for field in want} == want


def test_fallback_uid_is_stable_and_depends_on_the_feed():
    entries, url = normalized(DATA / "rss-duplicate-guids.xml")
    again, _ = normalized(DATA / "rss-duplicate-guids.xml")
    assert entries[2].entry_uid == again[2].entry_uid
    tuple_ = "\x1f".join(["https://news.example.net/stories/3", "No id at all", "", "src"])
    assert entries[2].entry_uid == hashlib.sha256(tuple_.encode()).hexdigest()
    parsed = parse_feed((DATA / "rss-duplicate-guids.xml").read_bytes(), url)
    elsewhere = normalize_entries(parsed.entries, "another-source", url, NOW)
    assert elsewhere[2].entry_uid != entries[2].entry_uid


def test_dates_missing_or_in_the_future_order_by_first_seen():
    raw = [{"id": "future", "title": "t", "published_parsed": (2099, 1, 1, 0, 0, 0, 0, 0, 0)},
           {"id": "none", "title": "t"}]
    future, missing = normalize_entries(raw, "s", "https://example.org/", NOW)
    assert future.published == "2099-01-01T00:00:00Z"
    assert future.sort_time == missing.sort_time == "2026-11-21T12:00:00Z"


def test_a_non_feed_is_a_clear_error():
    parsed = parse_feed(b"<html><body>Hello</body></html>", "https://example.org/")
    assert parsed.error.startswith("not a feed")


@pytest.mark.parametrize("struct, expected", [
    ((1970, 1, 1, 0, 0, 0, 0, 0, 0), "1970-01-01T00:00:00Z"),
    ((2100, 12, 31, 23, 59, 59, 0, 0, 0), "2100-12-31T23:59:59Z"),
    ((1969, 12, 31, 23, 59, 59, 0, 0, 0), None),
    ((2101, 1, 1, 0, 0, 0, 0, 0, 0), None),
    ((1, 1, 1, 0, 0, 0, 0, 0, 0), None),  # Hugo's zero date
    ((9999, 12, 31, 23, 59, 59, 0, 0, 0), None),
    ((2026, 13, 1, 0, 0, 0, 0, 0, 0), None),
    ((2026, 1, 1, 10**30, 0, 0, 0, 0, 0), None),
    ((2026, 1, 1, -10**30, 0, 0, 0, 0, 0), None),
    ((2026.0, 1, 1, 0, 0, 0, 0, 0, 0), None),
    ((True, 1, 1, 0, 0, 0), None),
    ("2026-01-01", None), (123, None), ({}, None), ((2026, 1), None), (None, None),
])
def test_dates_outside_1970_to_2100_or_not_dates_count_as_missing(struct, expected):
    assert struct_to_rfc3339(struct) == expected


def test_an_rss_author_line_is_split_at_its_parentheses_whatever_its_letters():
    """feedparser 6.0.14 splits "email (Name)" at the wrong offsets once a letter is not ASCII."""
    feed = ("<rss version='2.0'><channel><title>t</title><link>https://x.example/</link>"
            "<managingEditor>jonas@x.example (Jonas Große)</managingEditor>"
            "<item><guid>a</guid><author>zoë@x.example (Zoë Ünal)</author></item>"
            "<item><guid>b</guid></item></channel></rss>").encode()
    parsed = parse_feed(feed, "https://x.example/feed")
    own, inherited = normalize_entries(parsed.entries, "s", "https://x.example/feed", NOW, feed_authors=parsed.authors)
    assert own.authors == [{"name": "Zoë Ünal", "email": "zoë@x.example", "uri": None}]
    assert inherited.authors == [{"name": "Jonas Große", "email": "jonas@x.example", "uri": None}]


def test_a_derived_uid_holds_no_date_when_a_link_or_title_names_the_entry():
    def uid(**raw):
        return normalize_entries([raw], "src", "https://news.example.net/feed", NOW)[0].entry_uid

    future, past = (2099, 1, 1, 0, 0, 0, 0, 0, 0), (2026, 1, 1, 0, 0, 0, 0, 0, 0)
    assert uid(title="t", link="/a", published_parsed=future) == uid(title="t", link="/a", published_parsed=past)
    assert uid(title="t", published_parsed=future) == uid(title="t", published_parsed=past)
    # An entry with neither is told apart from the feed's others by its date alone.
    assert uid(summary="s", published_parsed=future) != uid(summary="s", published_parsed=past)
