"""The date filters (docs/design.md#filters) with their own cases, JSON Feed, HTML pages, and the parser's limits."""

import calendar
import json
import time

import pytest

from starfeed.model import Entry, Source
from starfeed.parse.feed import parse_feed
from starfeed.parse.filters import filter_entries
from starfeed.parse.html import discover_feeds, extract_article
from starfeed.parse.normalize import normalize_entries


def epoch(stamp: str) -> float:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def entry(published: str | None, link: str = "https://news.example/a") -> Entry:
    return Entry(entry_uid=str(published), feed_id="s", canonical_link=link, published=published,
                 first_seen="2026-02-17T12:30:00Z", last_seen="2026-02-17T12:30:00Z")


NEW = Source(source_id="s", url="https://news.example/feed", created_at=epoch("2026-02-17T10:00:00Z"))
POLLED = Source(source_id="s", url="https://news.example/feed", created_at=epoch("2026-02-17T10:00:00Z"),
                last_success_at=epoch("2026-02-17T12:00:00Z"))
NOW = epoch("2026-02-17T12:30:00Z")


@pytest.mark.parametrize("source, published, kept", [
    (NEW, "2026-02-15T08:00:00Z", False),  # first poll: published before the source was created
    (NEW, "2026-02-17T12:00:00Z", True),  # first poll: published after
    (POLLED, "2026-02-16T08:00:00Z", True),  # later polls: only the age rule
    (NEW, None, True),  # no date: kept on a first poll
    (POLLED, "2026-02-01T00:00:00Z", False),  # older than 7 days
    (POLLED, None, True),  # no date: never filtered by age
])
def test_age_and_first_fetch_filters(source, published, kept):
    result = filter_entries([entry(published)], source, NOW, max_age_days=7)
    assert bool(result.kept) is kept


def test_domain_enforcement_is_per_source_and_off_by_default():
    offsite = entry("2026-02-17T12:00:00Z", link="https://elsewhere.example/a")
    assert filter_entries([offsite], POLLED, NOW, 7).kept == [offsite]
    strict = Source(**{**POLLED.__dict__, "enforce_feed_domain": True})
    result = filter_entries([offsite], strict, NOW, 7)
    assert result.kept == [] and result.dropped == {"linking off the feed's domain": 1}


def undated(n: int) -> list[Entry]:
    return [Entry(entry_uid=f"u{i}", feed_id="s", canonical_link=f"https://news.example/{i}",
                  first_seen="2026-02-17T12:30:00Z", last_seen="2026-02-17T12:30:00Z") for i in range(n)]


def test_a_first_fetch_keeps_the_first_three_undated_entries_placed_behind_a_week_of_news():
    result = filter_entries(undated(20), NEW, NOW, max_age_days=7)
    assert [e.entry_uid for e in result.kept] == ["u0", "u1", "u2"]
    assert result.dropped == {"undated beyond the feed's first 3": 17}
    # In the feed's own order, each behind every entry the age rule keeps.
    assert [e.sort_time for e in result.kept] == ["2026-02-10T12:30:00Z", "2026-02-10T12:29:59Z",
                                                 "2026-02-10T12:29:58Z"]


def test_later_fetches_keep_every_undated_entry_at_its_first_sighting_in_the_feeds_order():
    result = filter_entries(undated(20), POLLED, NOW, max_age_days=7)
    assert len(result.kept) == 20 and not result.dropped
    assert [e.sort_time for e in result.kept[:3]] == ["2026-02-17T12:30:00Z", "2026-02-17T12:29:59Z",
                                                     "2026-02-17T12:29:58Z"]
    assert len({e.sort_time for e in result.kept}) == 20


def test_backfill_keeps_the_newest_n_of_a_first_fetch_whatever_their_age():
    dates = ["2025-06-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-02-17T12:00:00Z", "2025-12-01T00:00:00Z"]
    backfilled = Source(**{**NEW.__dict__, "backfill": 2})
    result = filter_entries([entry(d) for d in dates], backfilled, NOW, max_age_days=7)
    assert [e.published for e in result.kept] == ["2026-01-01T00:00:00Z", "2026-02-17T12:00:00Z"]
    assert result.dropped == {"older than 7 days": 2}
    # Only a first fetch: afterwards the age rule holds again.
    later = Source(**{**POLLED.__dict__, "backfill": 2})
    assert [e.published for e in filter_entries([entry(d) for d in dates], later, NOW, 7).kept] == [dates[2]]


def test_backfill_counts_undated_entries_after_dated_ones():
    mixed = undated(5) + [entry("2026-02-17T12:00:00Z")]
    result = filter_entries(mixed, Source(**{**NEW.__dict__, "backfill": 4}), NOW, max_age_days=7)
    assert [e.entry_uid for e in result.kept] == ["u0", "u1", "u2", "2026-02-17T12:00:00Z"]


FUTURE = "2099-01-01T00:00:00Z"
SKEWED = "2026-02-17T12:34:00Z"  # four minutes ahead: within the clock skew allowed


def dated_in(published: str, n: int) -> list[Entry]:
    return [Entry(entry_uid=f"f{i}", feed_id="s", canonical_link=f"https://news.example/f{i}", published=published,
                  first_seen="2026-02-17T12:30:00Z", last_seen="2026-02-17T12:30:00Z") for i in range(n)]


@pytest.mark.parametrize("case, entries, source, kept, dropped, sort_times", [
    ("a first fetch counts a date in the future as none: under the limit on undated entries, "
     "behind a week of news, in the feed's order",
     [*dated_in(FUTURE, 2), *undated(3), entry("2026-02-17T12:00:00Z")], NEW,
     ["f0", "f1", "u0", "2026-02-17T12:00:00Z"],
     {"dated in the future beyond the feed's first 3 undated": 0, "undated beyond the feed's first 3": 2},
     ["2026-02-10T12:30:00Z", "2026-02-10T12:29:59Z", "2026-02-10T12:29:58Z", "2026-02-17T12:00:00Z"]),
    ("a first fetch's future dates beyond the first three stay out",
     dated_in(FUTURE, 5), NEW, ["f0", "f1", "f2"], {"dated in the future beyond the feed's first 3 undated": 2},
     ["2026-02-10T12:30:00Z", "2026-02-10T12:29:59Z", "2026-02-10T12:29:58Z"]),
    ("later, a date in the future sits at its first sighting, in the feed's order",
     [*dated_in(FUTURE, 2), *undated(1)], POLLED, ["f0", "f1", "u0"], {},
     ["2026-02-17T12:30:00Z", "2026-02-17T12:29:59Z", "2026-02-17T12:29:58Z"]),
    ("a date within the clock skew is a date",
     [*dated_in(SKEWED, 4)], NEW, ["f0", "f1", "f2", "f3"], {}, ["2026-02-17T12:30:00Z"] * 4),
])
def test_a_date_in_the_future_when_first_seen_counts_as_undated(case, entries, source, kept, dropped, sort_times):
    given = {e.entry_uid: e.published for e in entries}
    result = filter_entries(entries, source, NOW, max_age_days=7, future_skew=300)
    assert [e.entry_uid for e in result.kept] == kept
    assert result.dropped == {reason: n for reason, n in dropped.items() if n}
    assert [e.sort_time for e in result.kept] == sort_times
    assert all(e.published == given[e.entry_uid] for e in result.kept)  # the date as the source gave it


def test_a_first_fetch_leaves_out_what_its_new_subscription_rules_drop_for_the_digest_to_remember():
    entries = [entry("2026-02-16T08:00:00Z"), entry("2026-02-01T00:00:00Z"), *dated_in(FUTURE, 2), *undated(3)]
    result = filter_entries(entries, NEW, NOW, max_age_days=7)
    # Before the subscription, and undated beyond the first three; the age rule drops the same later.
    assert [e.entry_uid for e in result.left_out] == ["2026-02-16T08:00:00Z", "u1", "u2"]
    assert filter_entries(entries, POLLED, NOW, max_age_days=7).left_out == []


def test_source_add_says_how_many_a_first_fetch_kept_and_which_rule_left_the_rest_out():
    from starfeed.inspect import Inspection, first_fetch
    from starfeed.parse.ingest import Ingested

    entries = [*dated_in(FUTURE, 5), *undated(45)]
    result = filter_entries(entries, NEW, NOW, max_age_days=7)
    ingested = Ingested(parsed_count=50, entries=result.kept, dropped=result.dropped)
    assert first_fetch(Inspection("t", ingested, None, None, 0.0, 0, [])) == (
        "50 entries, 3 shown after the first fetch: 2 dated in the future beyond the feed's first 3 undated stay "
        "out by a new subscription's limit on undated entries, 45 undated beyond the feed's first 3 stay out by a "
        "new subscription's limit on undated entries; --backfill N keeps the newest N")


def test_backfill_takes_a_date_in_the_future_for_none():
    entries = [*dated_in(FUTURE, 1), entry("2025-06-01T00:00:00Z"), entry("2026-01-01T00:00:00Z")]
    result = filter_entries(entries, Source(**{**NEW.__dict__, "backfill": 1}), NOW, max_age_days=7)
    # The newest dated entry is backfilled; the one dated 2099 is kept as the first undated one.
    assert [e.entry_uid for e in result.kept] == ["f0", "2026-01-01T00:00:00Z"]
    assert result.dropped == {"older than 7 days": 1}


JSON_FEED_11 = {
    "version": "https://jsonfeed.org/version/1.1", "title": "J", "home_page_url": "https://j.example/",
    "items": [
        {"id": "2", "url": "/posts/2", "title": "Two", "content_html": "<p>two<script>x()</script></p>",
        "date_published": "2026-11-20T10:00:00+01:00", "authors": [{"name": "Kim"}],
        "tags": ["a"], "attachments": [{"url": "/a.mp3", "mime_type": "audio/mpeg", "size_in_bytes": 9}]},
        {"id": 1, "title": "One", "content_text": "one <b>plain</b>"},
    ]}


def test_json_feed_1_1_and_1_0():
    parsed = parse_feed(json.dumps(JSON_FEED_11).encode(), "https://j.example/feed.json")
    assert (parsed.format, parsed.title, len(parsed.entries)) == ("json11", "J", 2)
    two, one = normalize_entries(parsed.entries, "s", "https://j.example/feed.json", NOW)
    assert (two.entry_uid, two.canonical_link, two.published) == ("2", "https://j.example/posts/2",
                                                                  "2026-11-20T09:00:00Z")
    assert "<script" not in two.content and two.authors[0]["name"] == "Kim"
    assert two.enclosures == [{"url": "https://j.example/a.mp3", "type": "audio/mpeg", "length": 9}]
    assert one.entry_uid == "1" and one.content == "one &lt;b&gt;plain&lt;/b&gt;"
    old = {**JSON_FEED_11, "version": "https://jsonfeed.org/version/1",
           "items": [{"id": "x", "title": "T", "author": {"name": "Solo"}, "content_text": "t"}]}
    parsed = parse_feed(json.dumps(old).encode(), "https://j.example/feed.json")
    assert parsed.format == "json10" and parsed.entries[0]["authors"][0]["name"] == "Solo"


@pytest.mark.parametrize("body, reason", [
    (b'{"title": "no version"}', "JSON Feed version"),
    (b'{"version": "https://jsonfeed.org/version/1.1", "items": 3}', "items list"),
    (b"[" * 100_000, "nested deeper"),
    (b"{bad json", "not JSON"),
    (b"   ", "empty"),
])
def test_bad_json_is_a_clear_error(body, reason):
    assert reason in parse_feed(body, "https://j.example/", "application/json").error


def test_items_beyond_the_limit_keep_the_newest():
    def published(n: int) -> str:
        return time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime(NOW - n * 60))

    items = "".join(f"<item><guid isPermaLink='false'>{n}</guid><pubDate>{published(n)}</pubDate></item>"
                    for n in reversed(range(50)))
    parsed = parse_feed(f"<rss version='2.0'><channel><title>t</title>{items}</channel></rss>".encode(),
                        "https://x.example/", max_items=10)
    assert sorted(int(e["id"]) for e in parsed.entries) == list(range(10))
    assert parsed.warnings == ["50 items: kept the newest 10"]


def test_nesting_deeper_than_the_limit_is_refused_but_html_in_cdata_is_not_nesting():
    deep = b"<rss><channel>" + b"<x>" * 300 + b"</x>" * 300 + b"</channel></rss>"
    assert "nested deeper" in parse_feed(deep, "https://x.example/", max_depth=256).error
    cdata = b"<rss version='2.0'><channel><title>t</title><item><title>i</title><description><![CDATA[" \
        + b"<br>" * 1000 + b"]]></description></item></channel></rss>"
    assert parse_feed(cdata, "https://x.example/", max_depth=256).error is None


POST = ("<p>" + "The main text of the post goes on for a while, as posts do, with commas, and sentences. " * 3
        + "</p>") * 3
PAGE = f"""<!doctype html><html><head><title>A blog</title><base href="https://blog.example/">
<meta name="author" content="Rosa"><meta property="article:author" content="ignored">
<link rel="alternate" type="application/rss+xml" title="RSS" href="/feed.xml">
<link rel="alternate" type="application/atom+xml" href="atom.xml#x">
<link rel="alternate" type="application/feed+json" href="https://blog.example/feed.json">
<link rel="stylesheet" type="text/css" href="/s.css"></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav><div><p>Short.</p></div>
<article><h1>Post</h1>{POST}<a href="/next">next post</a><script>evil()</script></article>
<footer>Copyright</footer></body></html>""".encode()


def test_autodiscovery_finds_rss_atom_and_json_feed_in_page_order():
    feeds = discover_feeds(PAGE, "https://blog.example/post/1")
    assert [(f.url, f.kind) for f in feeds] == [("https://blog.example/feed.xml", "rss"),
                                                ("https://blog.example/atom.xml", "atom"),
                                                ("https://blog.example/feed.json", "json")]


def test_article_extraction_takes_the_article_and_the_author_meta_first():
    article = extract_article(PAGE, "https://blog.example/post/1")
    assert article.text.startswith("Post The main text of the post goes on")
    assert not any(word in article.text for word in ("Home", "About", "Short.", "Copyright"))
    assert article.author == "Rosa" and article.title == "A blog"
    assert "evil" not in article.html and 'href="https://blog.example/next"' in article.html


def test_without_an_article_the_largest_text_block_wins():
    page = (b"<html><body><div><p>tiny</p></div><div class='c'><p>" + b"long text " * 50
            + b"</p><p>more</p></div></body></html>")
    article = extract_article(page, "https://x.example/")
    assert article.text.startswith("long text") and article.author is None


def test_autodiscovery_keeps_only_links_under_the_url_policy():
    page = (b'<html><head><base href="http://[broken"><link rel="alternate" type="application/rss+xml" '
            b'href="http://[::1"><link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">'
            b'<link rel="alternate" type="application/atom+xml" href="/atom.xml#top"></head></html>')
    assert [f.url for f in discover_feeds(page, "https://blog.example/post")] == ["https://blog.example/atom.xml"]


def test_an_article_of_text_alone_is_the_article_and_broken_links_do_not_fail_the_page():
    text = "Only text here, no child element, and enough of it to be an article. " * 6
    page = (b"<html><body><div><p>" + b"<a href='/x'>navigation</a> " * 20 + b"<a href='http://[x'>bad</a></p>"
            b"</div><article>" + text.encode() + b"</article></body></html>")
    article = extract_article(page, "https://x.example/")
    assert article.text == text.strip()


def test_a_hand_edited_backfill_that_is_not_a_count_backfills_nothing():
    for value in (None, "3", 2.5):
        result = filter_entries([entry("2025-06-01T00:00:00Z")], Source(**{**NEW.__dict__, "backfill": value}), NOW, 7)
        assert result.kept == [] and result.dropped == {"older than 7 days": 1}
