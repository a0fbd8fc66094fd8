"""What an aggregate shows: one article once, under the source that had it first, in an honest order."""

from starfeed.model import Entry
from starfeed.render.choose import for_readers, newest_first


def entry(uid, feed, link=None, published=None, first_seen="2026-11-20T10:00:00Z", ordered_at=None):
    return Entry(entry_uid=uid, feed_id=feed, canonical_link=link, published=published,
                 first_seen=first_seen, last_seen=first_seen, ordered_at=ordered_at)


def test_the_same_article_from_two_sources_appears_once_under_the_source_that_had_it_first():
    late = entry("b1", "b", "https://site.example/post", "2026-11-20T09:00:00Z", first_seen="2026-11-20T11:00:00Z")
    early = entry("a1", "a", "https://site.example/post", "2026-11-20T09:30:00Z", first_seen="2026-11-20T09:40:00Z")
    other = entry("b2", "b", "https://site.example/other", "2026-11-20T08:00:00Z")
    assert [e.entry_uid for e in for_readers([late, other, early], 10)] == ["a1", "b2"]


def test_two_people_starring_one_repository_are_two_items():
    stars = [entry(f"github-star://{who}/o/r/2026-11-20T09:00:00Z", who, "https://github.com/o/r",
                   "2026-11-20T09:00:00Z") for who in ("ann", "bob")]
    assert len(for_readers(stars, 10)) == 2


def test_entries_without_links_are_never_merged_and_the_limit_holds():
    linkless = [entry(f"n{i}", "a", None, f"2026-11-20T0{i}:00:00Z") for i in range(5)]
    assert [e.entry_uid for e in for_readers(linkless, 3)] == ["n4", "n3", "n2"]


def test_untrustworthy_dates_order_by_first_sighting_and_backlog_sits_behind_dated_news():
    dated = entry("d", "a", "https://a.example/d", "2026-11-19T10:00:00Z")
    future = entry("f", "b", "https://b.example/f", "2031-01-01T00:00:00Z", first_seen="2026-11-20T09:00:00Z")
    undated = entry("u", "b", "https://b.example/u", None, first_seen="2026-11-20T08:00:00Z")
    backlog = entry("k", "c", "https://c.example/k", None, first_seen="2026-11-20T12:00:00Z",
                    ordered_at="2026-11-13T12:00:00Z")
    assert [e.entry_uid for e in newest_first([backlog, dated, undated, future])] == ["f", "u", "d", "k"]


def test_a_stored_date_before_1970_is_not_trusted_whoever_wrote_it():
    hugo = entry("h", "a", "https://a.example/h", "0001-01-01T00:00:00Z", first_seen="2026-11-20T10:00:00Z")
    dated = entry("d", "a", "https://a.example/d", "2026-11-19T10:00:00Z")
    assert [e.entry_uid for e in newest_first([dated, hugo])] == ["h", "d"]


def test_a_hand_edited_date_of_the_wrong_shape_or_type_orders_by_first_sighting():
    bad = [entry("p", "a", "https://a.example/p", "2000-99-99T00:00:00Z"),
           entry("q", "a", "https://a.example/q", None, ordered_at=5),
           entry("r", "a", "https://a.example/r", 5)]
    assert {e.sort_time for e in bad} == {"2026-11-20T10:00:00Z"}
    assert len(for_readers(bad, 10)) == 3
