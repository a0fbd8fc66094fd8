"""robots.txt's answers for article pages, and max_score (docs/design.md#max-score) and deframed items. Pure."""

import pytest

from starfeed.enrich.present import deframed, threshold, within
from starfeed.fetch.robots import answer, robots_url
from starfeed.model import Entry

ROBOTS = """User-agent: *
Disallow: /private/
Allow: /private/open

User-agent: starfeed
Disallow: /no-starfeed/
"""


@pytest.mark.parametrize("record, url, allowed", [
    ({"status": 200, "body": ROBOTS}, "https://news.example/private/story", True),  # our group, not *
    ({"status": 200, "body": ROBOTS}, "https://news.example/no-starfeed/story", False),
    ({"status": 200, "body": "User-agent: *\nDisallow: /private/\n"}, "https://news.example/private/x", False),
    ({"status": 200, "body": "User-agent: *\nDisallow: /*.pdf$\n"}, "https://news.example/a.pdf", False),
    ({"status": 200, "body": "User-agent: *\nDisallow: /*.pdf$\n"}, "https://news.example/a.html", True),
    ({"status": 200, "body": ""}, "https://news.example/anything", True),
    ({"status": 404, "body": ""}, "https://news.example/anything", True),  # RFC 9309: unavailable, allow
    ({"status": 403, "body": ""}, "https://news.example/anything", True),
    ({"status": 503, "body": ""}, "https://news.example/anything", False),  # unreachable: disallow
    ({"status": 429, "body": ""}, "https://news.example/anything", False),  # asked to wait: not read
    ({"status": None, "error": "could not connect", "body": ""}, "https://news.example/x", False),
    ({"status": "200", "body": ""}, "https://news.example/x", False),  # a hand-edited item: not ours to trust
    ({"status": 200, "body": ["Disallow: /"]}, "https://news.example/x", True),  # read as text
])
def test_robots_answers(record, url, allowed):
    result = answer(record, url)
    assert result.allowed is allowed
    assert (result.reason is None) is allowed


def test_a_refusal_says_where_it_comes_from():
    assert answer({"status": 200, "body": ROBOTS}, "https://news.example:8080/no-starfeed/a").reason == \
        "disallowed by https://news.example:8080/robots.txt"
    assert "unreachable (HTTP 503)" in answer({"status": 503}, "https://news.example/a").reason
    assert robots_url("https://user:pw@news.example:8080/a/b?c") == "https://news.example:8080/robots.txt"


def entry(uid, score=None, title="SHOCKING news!"):
    result = None if score is None else {"title": f"News {uid}", "summary": "What happened.",
                                         "facts": ["A <fact>."], "score": score}
    return Entry(uid, "f", f"https://news.example/{uid}", title=title, analyzer_result=result)


def test_max_score_keeps_analyzed_items_at_or_below_it():
    entries = [entry("a", 0.1), entry("b", 0.5), entry("c", 0.51), entry("d")]
    assert [e.entry_uid for e in within(entries, None)] == ["a", "b", "c", "d"]
    assert [e.entry_uid for e in within(entries, 0.5)] == ["a", "b"]  # d waits until it is scored
    assert [e.entry_uid for e in within(entries, 0.0)] == []
    assert [e.entry_uid for e in within(entries, 1.0)] == ["a", "b", "c"]


@pytest.mark.parametrize("value, expected", [(None, None), ("", None), ("0.5", 0.5), ("0.50", 0.5), ("1", 1.0),
                                             ("0", 0.0), ("0.333", 0.333), ("0.3334", 0.333)])
def test_thresholds(value, expected):
    assert threshold(value) == expected


@pytest.mark.parametrize("value", ["-0.1", "1.5", "nan", "abc", "inf"])
def test_unusable_thresholds_say_so(value):
    with pytest.raises(ValueError, match="not a number from 0 to 1"):
        threshold(value)


def test_a_deframed_item_carries_the_result_and_keeps_the_original_headline():
    shown = deframed(entry("a", 0.75, title="SHOCKING <news>!"))
    assert shown.title == "News a" and shown.summary == "What happened."
    assert shown.canonical_link == "https://news.example/a"
    assert "<li>A &lt;fact&gt;.</li>" in shown.content
    assert "Original headline: SHOCKING &lt;news&gt;!" in shown.content and "framing score 0.75" in shown.content
    unanalyzed = entry("b")
    assert deframed(unanalyzed) is unanalyzed


@pytest.mark.parametrize("body, delay", [
    ("User-agent: starfeed\nCrawl-delay: 7\n", 7.0), ("User-agent: *\nCrawl-delay: 2.5\n", 2.5),
    ("User-agent: other\nCrawl-delay: 9\n", None), ("User-agent: *\nCrawl-delay: soon\n", None),
    ("User-agent: *\nCrawl-delay: 99999\n", 3600.0)])
def test_a_crawl_delay_is_read_for_our_token_and_bounded(body, delay):
    assert answer({"status": 200, "body": body}, "https://news.example/a").crawl_delay == delay
