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
    entries = [Entry("old", "a", "https://b.example/old", published="2009-01-01T00:00:00Z"),
               Entry("undated", "a", "https://b.example/u"), Entry("undated-2", "a", "https://b.example/u2"),
               Entry("elsewhere", "a", "https://other.example/x", published="2010-01-01T00:00:00Z")]
    kept = history_entries(entries, source, NOW, max_age_days=7)
    assert [e.entry_uid for e in kept.kept] == ["old", "undated", "undated-2"]
    assert all(e.backfilled for e in kept.kept) and dict(kept.dropped) == {"linking off the feed's domain": 1}
    # Undated history sits with the oldest entries a feed shows, in the document's order.
    assert rfc3339(NOW - 7 * 86400 - 3) <= kept.kept[2].ordered_at < kept.kept[1].ordered_at <= rfc3339(NOW - 7 * 86400)
