"""Page cursors (starfeed.cursors): each kind round-trips, reads the cursors written before there
was one codec, and refuses anything else with a reason."""

import base64

import pytest

from starfeed.cursors import BadCursor, decode_keys, decode_sort_key, encode_keys, encode_sort_key
from starfeed.store.limits import SORT_KEY_BYTES

KEYS = ("feed_id", "entry_uid", "sort_key")


def test_a_feed_page_cursor_round_trips():
    key = "2026-11-26T08:00:00Z#https://news.example/a?b=c"
    assert decode_sort_key(encode_sort_key(key), "before", SORT_KEY_BYTES) == key


def test_a_rest_cursor_holds_its_keys_and_its_list():
    keys = {"feed_id": "abc123", "entry_uid": "https://x.example/?p=1", "sort_key": "2026-11-26T00:00:00Z#é"}
    assert decode_keys(encode_keys("feed-entries", keys), "feed-entries", KEYS) == keys


def test_cursors_read_and_write_as_before_the_one_codec():
    """Feed readers keep the links they were given, and API clients their `next`."""
    feed_cursor = "MjAyNi0xMS0yNlQwODowMDowMFojaHR0cHM6Ly9uZXdzLmV4YW1wbGUvYT9iPcOp"
    assert decode_sort_key(feed_cursor, "before", SORT_KEY_BYTES) == "2026-11-26T08:00:00Z#https://news.example/a?b=é"
    assert encode_sort_key("2026-11-26T08:00:00Z#https://news.example/a?b=é") == feed_cursor
    keys = {"feed_id": "abc123", "entry_uid": "https://x.example/?p=1", "sort_key": "2026-11-26T00:00:00Z#é"}
    rest_cursor = ("eyJrIjoiZmVlZC1lbnRyaWVzIiwiZmVlZF9pZCI6ImFiYzEyMyIsImVudHJ5X3VpZCI6Imh0dHBzOi8veC5leGFtcGxlLz9w"
                   "PTEiLCJzb3J0X2tleSI6IjIwMjYtMTEtMjZUMDA6MDA6MDBaI8OpIn0")
    assert decode_keys(rest_cursor, "feed-entries", KEYS) == keys
    assert encode_keys("feed-entries", keys) == rest_cursor


@pytest.mark.parametrize("cursor", [
    "not-a-cursor", "", base64.urlsafe_b64encode(b"9999-99-99T00:00:00Z#x").decode(),
    base64.urlsafe_b64encode(b"2026-11-26T00:00:00Z#").decode(),
    base64.urlsafe_b64encode(b"2026-11-26T00:00:00Z#" + b"x" * 1100).decode(),
    base64.urlsafe_b64encode(b"\xff\xfe").decode(), "A" * 5000,
    encode_keys("feed-entries", {"feed_id": "a", "entry_uid": "b", "sort_key": "2026-11-26T00:00:00Z#x"})])
def test_a_feed_page_cursor_that_is_not_one_is_refused(cursor):
    with pytest.raises(BadCursor, match="after= is not a page cursor of this feed"):
        decode_sort_key(cursor, "after", SORT_KEY_BYTES)


@pytest.mark.parametrize("cursor", [
    "", "!!!", "bm9wZQ", "e30", encode_keys("entries", {"feed_id": "a", "entry_uid": "b", "sort_key": "c"}),
    encode_keys("feed-entries", {"feed_id": "a", "entry_uid": "b"}),
    encode_keys("feed-entries", {"feed_id": "a", "entry_uid": "b", "sort_key": "c", "more": "d"}),
    encode_keys("feed-entries", {"feed_id": "a", "entry_uid": "", "sort_key": "c"}),
    encode_keys("feed-entries", {"feed_id": "a", "entry_uid": 5, "sort_key": "c"}),
    encode_sort_key("2026-11-26T00:00:00Z#x"), "A" * 5000])
def test_a_rest_cursor_that_is_not_one_is_refused(cursor):
    with pytest.raises(BadCursor, match="take it from the `next` of a page of feed-entries"):
        decode_keys(cursor, "feed-entries", KEYS)
