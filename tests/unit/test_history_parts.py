"""A history walk's pure parts: the link to older entries, and the entries an archive keeps."""

import pytest

from starfeed.model import Entry, Source
from starfeed.parse.feed import parse_feed
from starfeed.parse.filters import history_entries
from starfeed.parse.normalize import rfc3339

NOW = 1_800_000_000.0


@pytest.mark.parametrize("body, older", [
    (b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><link rel="prev-archive" href="/2024.xml"/>'
     b'<link rel="next" href="/page2.xml"/></feed>', "https://b.example/2024.xml"),  # an archive first
    (b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><link rel="next" href="/page2.xml"/></feed>',
     "https://b.example/page2.xml"),
    (b'{"version": "https://jsonfeed.org/version/1.1", "title": "t", "next_url": "https://b.example/p2", "items": []}',
     "https://b.example/p2"),
    (b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><link rel="self" href="/f"/></feed>', None)])
def test_a_document_names_the_one_of_older_entries(body, older):
    assert parse_feed(body, "https://b.example/feed.xml").older == older


def test_an_archive_keeps_every_entry_whatever_its_date_and_marks_it():
    source = Source(source_id="a", url="https://b.example/feed.xml", created_at=NOW, enforce_feed_domain=True)
    seen = rfc3339(NOW)
    entries = [Entry("old", "a", "https://b.example/old", published="2009-01-01T00:00:00Z", first_seen=seen),
               Entry("undated", "a", "https://b.example/u", first_seen=seen),
               Entry("future", "a", "https://b.example/f", published="2099-06-01T00:00:00Z", first_seen=seen),
               Entry("elsewhere", "a", "https://other.example/x", published="2010-01-01T00:00:00Z", first_seen=seen)]
    kept = history_entries(entries, source, NOW, max_age_days=7)
    assert [e.entry_uid for e in kept.kept] == ["old", "undated", "future"]
    assert all(e.backfilled for e in kept.kept) and dict(kept.dropped) == {"linking off the feed's domain": 1}
    # Undated and future-dated history sits below the document's oldest date, in its order:
    # never at the top of a feed as if new.
    assert [e.sort_time for e in kept.kept] == ["2009-01-01T00:00:00Z", "2008-12-31T23:59:59Z", "2008-12-31T23:59:58Z"]


def test_an_archive_without_a_date_sits_with_the_oldest_entries_a_feed_shows():
    source = Source(source_id="a", url="https://b.example/feed.xml", created_at=NOW)
    kept = history_entries([Entry("u", "a", "https://b.example/u", first_seen=rfc3339(NOW))], source, NOW, 7)
    assert kept.kept[0].sort_time == rfc3339(NOW - 7 * 86400)
