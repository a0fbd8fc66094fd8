"""Poisoned feeds (docs/design.md#fitting) and their families, in tests/data/poison: beside each input,
<file>.expected.json says what survives ingest (the error, the channel's title and link, and per
entry its uid, link, dates and warnings). A value "re:<pattern>" must match the whole field;
"count:<field>" is the field's length, "endswith:<field>" the field's end. Every entry must also
fit storage (parse.fit.misfits) and render in every format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nh3
import pytest

from starfeed.formats import BY_NAME
from starfeed.model import Source
from starfeed.parse import ingest as ingest_module
from starfeed.parse.feed import parse_feed
from starfeed.parse.fit import MAX_STORED_BYTES, misfits, stored_size
from starfeed.parse.ingest import ingest, read_feed
from starfeed.parse.normalize import normalize_entries
from starfeed.parse.text import truncate_html, utf8_size
from starfeed.render.feeds import FeedMeta, render
from starfeed.settings import Settings

DATA = Path(__file__).resolve().parent.parent / "data" / "poison"
CASES = sorted(p for p in DATA.iterdir() if not p.name.endswith(".expected.json"))
NOW = 1_795_262_400.0  # 2026-11-21T12:00:00Z
URL = "https://poison.example/feed"
SETTINGS = Settings(max_article_age_days=1_000_000)  # keep every entry, however old
SOURCE = Source(source_id="poison", url=URL, created_at=0, last_success_at=0)  # polled before: no first-fetch rules
META = FeedMeta("feed", "starfeed", "poison", "https://feeds.test/", "https://feeds.test")


def matches(got, want) -> bool:
    if isinstance(want, str) and want.startswith("re:"):
        return isinstance(got, str) and re.fullmatch(want[3:], got, re.DOTALL) is not None
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(matches, got, want))
    return got == want


def test_every_input_has_its_expected_results():
    assert len(CASES) >= 15
    assert all(p.with_name(p.name + ".expected.json").exists() for p in CASES)


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_a_poisoned_feed_ingests_to_what_is_expected(path):
    ingested = ingest(read_feed, path.read_bytes(), URL, None, SOURCE, NOW, SETTINGS)
    expected = json.loads(path.with_name(path.name + ".expected.json").read_text())
    assert matches(ingested.error, expected["error"]), ingested.error
    for key in ("title", "link", "warnings"):
        if key in expected:
            assert matches(getattr(ingested, key), expected[key]), key
    assert len(ingested.entries) == len(expected["entries"])
    for entry, want in zip(ingested.entries, expected["entries"]):
        assert misfits(entry, SETTINGS) == []
        for key, value in want.items():
            kind, _, field = key.rpartition(":")
            got = getattr(entry, field)
            if kind == "endswith":
                assert got.endswith(value), field
            else:
                assert matches(len(got) if kind == "count" else got, value), (field, str(got)[:300])
    for fmt in BY_NAME:
        assert render(fmt, META, ingested.entries, NOW)


def megabyte_entry() -> dict:
    """An item of several megabytes in every member a feed can make grow."""
    mb = 1024 * 1024
    quoted = '<p title="&quot;">"' + "x" * 60 + '" &amp; "</p>\n'
    return {
        "id": "i" * mb, "link": "https://poison.example/" + "l" * mb, "title": "title " * (mb // 6),
        "summary": "summary " * (mb // 8), "content": [{"value": quoted * (mb // len(quoted))}],
        "published_parsed": (2026, 11, 20, 8, 0, 0, 0, 0, 0),
        "tags": [{"term": f"{n}" + "c" * 1000} for n in range(10_000)],
        "authors": [{"name": "n" * 3000 + str(n), "email": "e" * 3000, "href": "https://a.example/" + "u" * 1990}
                    for n in range(1000)],
        "enclosures": [{"href": f"https://e.example/{n}/" + "u" * 1975, "type": "t" * 3000, "length": "9" * 40}
                       for n in range(1000)],
    }


def test_an_entry_of_megabytes_is_kept_and_fits():
    raw = megabyte_entry()
    entry, = normalize_entries([raw], "s", URL, NOW, SETTINGS)
    assert misfits(entry, SETTINGS) == []
    assert stored_size(entry) < MAX_STORED_BYTES
    assert entry.entry_uid.startswith("sha256:") and entry.canonical_link is None
    assert len(entry.categories) == 50 and len(entry.authors) == 10 and len(entry.enclosures) == 10
    assert [w.split(":")[0] for w in entry.warnings[:-1]] == [
        "id of 1,048,576 bytes stored as its SHA-256", "link of 1,048,599 bytes dropped",
        "title of 1,048,571 characters clipped to 1,000", "10,000 categories", "1,000 authors",
        "10 author URIs dropped", "1,000 enclosures"]
    assert re.fullmatch(r"content of 1,048,575 bytes truncated to 1[23]\d,\d{3}: longer than 131,072",
                        entry.warnings[-1])
    assert entry.content.endswith("the rest is in the original feed.</em></p>")
    assert normalize_entries([raw], "s", URL, NOW, SETTINGS)[0].entry_uid == entry.entry_uid
    for fmt in BY_NAME:
        assert render(fmt, META, [entry], NOW)


def test_a_repeated_guid_near_the_limit_still_fits():
    guid = "g" * 510
    first, second = normalize_entries([{"id": guid, "title": "one"}, {"id": guid, "title": "two"}],
                                      "s", URL, NOW, SETTINGS)
    assert first.entry_uid == guid
    assert re.fullmatch("sha256:[0-9a-f]{64}", second.entry_uid)


def test_content_that_json_escapes_double_is_truncated_further():
    quotes = '<p>"' + '"' * 1000 + "</p>"
    entry, = normalize_entries([{"id": "q", "content": [{"value": quotes * 300}],
                                 "summary": "s", "title": "t"}], "s", URL, NOW, SETTINGS)
    assert utf8_size(entry.content) <= SETTINGS.max_content_bytes
    assert stored_size(entry) < MAX_STORED_BYTES
    big = Settings(max_content_bytes=1024 * 1024)
    entry, = normalize_entries([{"id": "q", "content": [{"value": quotes * 300}]}], "s", URL, NOW, big)
    assert stored_size(entry) < MAX_STORED_BYTES and misfits(entry, big) == []
    assert re.fullmatch(r"content of 302,400 bytes truncated to 14\d,\d{3}: "
                        r"the entry must weigh less than 300,000 bytes stored", entry.warnings[-1])


SAMPLE = ('<div><p>Caf&eacute; &amp; <a href="https://x.example/?a=1&amp;b=2" title="x &gt; y">l&lt;ink</a>'
          '<img src="https://x.example/i.png" alt="&quot;"></p><ul><li>one</li><li>two &#169;</li></ul>'
          '<p>' + "word " * 200 + "&amp;&lt;</p></div>")


@pytest.mark.parametrize("max_bytes", range(1100, 2600, 23))
def test_truncation_ends_at_a_boundary_and_is_well_formed(max_bytes):
    clean = nh3.clean(SAMPLE)
    note = "<p>[cut]</p>"
    kept = truncate_html(clean, max_bytes, note)
    assert utf8_size(kept) <= max_bytes and kept.endswith(note)
    body = kept[:-len(note)]
    assert nh3.clean(body) == body  # well-formed: sanitizing again changes nothing
    assert body.count("<") == body.count(">")  # no tag cut in half
    assert all(re.match(r"&(#\d+|#x[0-9a-f]+|[a-z]+);", body[i:]) for i in (m.start() for m in re.finditer("&", body)))
    assert clean.startswith(body[:len(body) // 2])  # a prefix of the original, sanitized


def test_ingest_never_raises_and_names_the_stage(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom\x00 in the normalizer")

    monkeypatch.setattr(ingest_module, "normalize_entries", broken)
    body = (DATA / "hugo-zero-date.xml").read_bytes()
    result = ingest(read_feed, body, URL, None, SOURCE, NOW, SETTINGS)
    assert result.error == "parse: RuntimeError: boom in the normalizer"


def test_feedparser_raising_is_a_recorded_error(monkeypatch):
    def raising(*args, **kwargs):
        raise OverflowError("charref out of range")

    monkeypatch.setattr(ingest_module.parse_feed.__globals__["feedparser"], "parse", raising)
    parsed = parse_feed(b"<rss version='2.0'><channel/></rss>", URL)
    assert parsed.error == "not parseable: OverflowError: charref out of range"


@pytest.mark.parametrize("ttl, minutes", [("60", 60), (" 0060 ", 60), ("0", None), ("-5", None), ("1e5", None),
                                          ("²", None), ("9" * 5000, 525_600), ("600000", 525_600)])
def test_ttl_is_a_positive_number_of_minutes_at_most_a_year(ttl, minutes):
    body = f"<rss version='2.0'><channel><title>t</title><ttl>{ttl}</ttl></channel></rss>".encode()
    assert parse_feed(body, URL).ttl_minutes == minutes
