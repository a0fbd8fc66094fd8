"""A page without a feed read by CSS selectors (parse/selected.py). Each page in
tests/data/selected has its selectors and its expected result beside it (*.expected.json): the
entries as normalized (links absolute and http(s) only, summaries sanitized, dates read
leniently), or the error that names the selector that found nothing."""

import json
import time
import typing
from dataclasses import asdict
from pathlib import Path

import pytest

from starfeed.model import Selectors, Source
from starfeed.parse.ingest import ingest, read_selected
from starfeed.parse.normalize import normalize_entries, struct_to_rfc3339
from starfeed.parse.selected import NONE_FOUND, read_date, read_page, selectors_problem
from starfeed.settings import Settings

SELECTOR_CHARS = Settings().max_selector_chars
DATA = Path(__file__).resolve().parent.parent / "data" / "selected"
CASES = sorted(DATA.glob("*.html"))
NOW = 1_800_000_000.0  # 2027-01-15
LIST = Selectors(items="li", title="a", link="a")


@pytest.mark.parametrize("page", CASES, ids=[p.stem for p in CASES])
def test_each_page_reads_as_expected(page):
    expected = json.loads(page.with_name(page.stem + ".expected.json").read_text())
    read = read_page(page.read_bytes(), expected["url"], expected["content_type"],
                     Selectors(**expected["selectors"]), 1000)
    entries = normalize_entries(read.entries, "s1", read.base, NOW)
    assert (read.title, read.error, read.warnings) == (expected["title"], expected["error"], expected["warnings"])
    assert [{"id": e.entry_uid, "link": e.canonical_link, "title": e.title, "published": e.published,
             "summary": e.summary, "content": e.content} for e in entries] == expected["entries"]


def test_the_data_covers_a_page_that_changed_shape_for_each_kind_of_selector():
    errors = [json.loads(p.read_text())["error"] for p in sorted(DATA.glob("*.expected.json"))]
    for role in ("items", "title", "date"):
        assert any(e and e.startswith(f"{NONE_FOUND[role]}: the {role} selector") for e in errors), role


@pytest.mark.parametrize(("selectors", "problem"), [
    (Selectors("li.post", "h2", "a"), None),
    (Selectors("li.post", "h2", "a", "time", ".summary > p:first-child"), None),
    (Selectors("ul > li:nth-of-type(2n+1)", "[data-role='title']", "a[href^='https']"), None),
    (Selectors("", "h2", "a"), "a page read by selectors needs --items, --title and --link: --items is missing"),
    (Selectors("li", "h2", " "), "a page read by selectors needs --items, --title and --link: --link is missing"),
    (Selectors("li", "h2", "a["), "the link selector 'a[' is not a CSS selector starfeed can use: Expected ident"),
    (Selectors("li", "h2::text", "a"), "the title selector 'h2::text' is not a CSS selector starfeed can use: "
                                       "Pseudo-elements are not supported."),
    (Selectors("li", "h2", "a", date="time >"), "the date selector 'time >' is not a CSS selector"),
    (Selectors("li", "h2", "a", summary="//p"), "the summary selector '//p' is not a CSS selector"),
    (Selectors("li" * SELECTOR_CHARS, "h2", "a"), f"the items selector is {2 * SELECTOR_CHARS:,} characters long"),
    # Of too many parts: a union of alternatives, each run on every element, or deep nesting.
    (Selectors(", ".join(["div p a"] * 7), "h2", "a"), "the items selector 'div p a, div p a, div p a, div p a, "
                                                        "div p a, div p a, div p a' has 47 parts"),
    (Selectors("li", ":is(" * 40 + "h2" + ")" * 40, "a"), "the title selector"),
    (Selectors("li", "h2", "*" + ":not(*" * 12 + ")" * 12), "the link selector"),
])
def test_selectors_are_compiled_before_they_are_stored(selectors, problem):
    found = selectors_problem(selectors)
    assert found == problem if problem is None else found.startswith(problem)


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-11-20", "2026-11-20T00:00:00Z"),
    ("2026-11-20T10:00:00+02:00", "2026-11-20T08:00:00Z"),
    ("Fri, 20 Nov 2026 10:00:00 GMT", "2026-11-20T10:00:00Z"),
    ("November 20, 2026", "2026-11-20T00:00:00Z"),
    ("Nov. 20, 2026", "2026-11-20T00:00:00Z"),
    ("20 November 2026", "2026-11-20T00:00:00Z"),
    ("Friday, November 20, 2026", "2026-11-20T00:00:00Z"),
    ("2026/11/20", "2026-11-20T00:00:00Z"),
    ("20.11.2026", "2026-11-20T00:00:00Z"),
    ("  Updated\n 20 Nov 2026 ", "2026-11-20T00:00:00Z"),
    ("yesterday", None),
    ("3 days ago", None),
    ("", None),
    ("2026-13-45", None),
])
def test_dates_are_read_leniently_and_one_not_understood_is_none(text, expected):
    assert struct_to_rfc3339(read_date(text)) == expected


def page(items: str) -> bytes:
    return f"<!doctype html><html><head><title>List</title></head><body><ul>{items}</ul></body></html>".encode()


def test_a_page_of_many_items_gives_the_first_max_items_and_says_so():
    read = read_page(page("".join(f'<li><a href="/{n}">Item {n}</a></li>' for n in range(30))),
                     "https://list.example/", "text/html", LIST, 25)
    assert len(read.entries) == 25 and read.entries[-1]["title"] == "Item 24"
    assert read.warnings == ["the items selector found 30 items: the first 25 are read"]


@pytest.mark.parametrize(("body", "error"), [
    (b"", "not an HTML page: nothing for the selectors to read"),
    (b"   ", "not an HTML page: nothing for the selectors to read"),
    (page("<li>Nothing to link</li>"), "no titles: the title selector 'a' found nothing in the page's only item"),
    (page('<li><a href="javascript:go()">Go</a></li><li><a href="ftp://x.example/f">F</a></li>'),
     "no links: the link selector 'a' found no http(s) link in any of the 2 items"),
    (page('<li><a href="/1"> </a></li>'), "no titles: the title selector 'a' found no text in the page's only item"),
])
def test_a_page_the_selectors_cannot_read_is_an_error_not_an_empty_list(body, error):
    assert read_page(body, "https://list.example/", "text/html", LIST, 1000).error == error


def test_an_item_inside_another_is_part_of_it_so_nesting_costs_no_extra_pass():
    threads = page('<li><a href="/1">One</a><ul><li><a href="/2">A reply</a></li></ul></li>'
                   '<li><a href="/3">Two</a></li>')
    assert [e["title"] for e in read_page(threads, "https://list.example/", "text/html", LIST, 1000).entries] == \
        ["One", "Two"]
    # 250 items nested in each other around 300,000 elements: read as one, in well under a second
    # (each selector would otherwise walk the whole page 250 times).
    nested = (b"<html><body>" + b"".join(b"<div class=p><a href='/%d'>t%d</a>" % (n, n) for n in range(250))
              + b"<p>" + b"<span>x</span>" * 300_000 + b"</p>" + b"</div>" * 250 + b"</body></html>")
    started = time.process_time()
    read = read_page(nested, "https://list.example/", "text/html", Selectors("div.p", "a", "a", "span", "p"), 1000)
    assert [e["title"] for e in read.entries] == ["t0"] and time.process_time() - started < 3.0


def test_an_internal_entity_or_an_external_dtd_stays_inert():
    body = (b'<!DOCTYPE html SYSTEM "http://127.0.0.1:9/evil.dtd" [<!ENTITY boom "EXPANDED">]>'
            b'<html><body><ul><li><a href="/1">A &boom; title</a></li></ul></body></html>')
    read = read_page(body, "https://list.example/", "text/html", LIST, 1000)
    assert read.error is None and "EXPANDED" not in json.dumps(read.entries)


def test_the_reader_normalizes_and_filters_as_for_a_feed():
    body = page('<li><a href="/old">Old</a><time>2027-01-14</time></li>'
                '<li><a href="/new">New</a><time>2027-01-15T07:30:00Z</time></li>')
    source = Source("s1", "https://list.example/", kind="selectors", created_at=NOW - 3600,
                    selectors=Selectors("li", "a", "a", "time"))
    read = read_selected(body, source.url, "text/html", source, NOW, Settings())
    assert (read.format, read.title, read.link, read.parsed_count) == ("selectors", "List", "https://list.example/", 2)
    assert [e.title for e in read.entries] == ["New"]  # the old one predates the subscription
    assert dict(read.dropped) == {"published before you subscribed": 1}


def test_a_source_without_selectors_says_how_to_give_them():
    source = Source("s1", "https://list.example/", kind="selectors")
    read = ingest(read_selected, page("<li><a href='/1'>One</a></li>"), source.url, "text/html", source, NOW,
                  Settings())
    assert read.error.startswith("no selectors stored for this page: `starfeed source set ID --items SEL")


def test_selectors_are_stored_as_a_typed_sub_record():
    from starfeed.store.records import typed

    stored = asdict(Selectors("li", "h2", "a", date="time"))
    hints = typing.get_type_hints(Source)
    assert typed(hints["selectors"], stored) == Selectors("li", "h2", "a", date="time")
    assert typed(hints["selectors"], {"items": "li", "title": 5, "link": "a"}) == Selectors("li", "", "a")
    assert typed(hints["selectors"], "li") is None


def test_reading_a_page_takes_milliseconds():
    body = page("".join(f'<li><a href="/{n}">Item {n}</a><time>2026-11-{n % 28 + 1:02d}</time></li>'
                        for n in range(1000)))
    started = time.process_time()
    read = read_page(body, "https://list.example/", "text/html", Selectors("li", "a", "a", "time"), 1000)
    assert len(read.entries) == 1000 and time.process_time() - started < 2.0


def test_a_selector_too_complex_or_too_slow_for_a_page_is_refused_with_the_reason(tmp_path):
    """What `starfeed inspect FILE --items SEL ...` says: a selector of too many parts is refused
    before the page is read; one whose reading outlasts selector_seconds is stopped, not waited for."""
    from dataclasses import replace

    from starfeed.inspect import inspect

    page = tmp_path / "list.html"
    items = b"<li><a href='https://x.example/p'>Post</a></li>" * 5000
    page.write_bytes(b"<html><body><ul>" + items + b"</ul></body></html>")
    settings = replace(Settings(), selector_seconds=0.5)
    union = ", ".join(["ul li"] * 9)  # 9 x 3 parts, and a comma and a space between each
    refused = inspect(str(page), settings, selectors=Selectors(union, "a", "a"))
    assert refused.error.startswith(f"the items selector '{union}' has 43 parts")
    assert "at most 32 (STARFEED_MAX_SELECTOR_PARTS)" in refused.error
    started = time.monotonic()
    slow = inspect(str(page), settings, selectors=Selectors("li ~ li ~ li", "a", "a"))
    assert time.monotonic() - started < 5
    assert slow.error == ("the selectors took longer than 0.5 s to read the page (STARFEED_SELECTOR_SECONDS): "
                          "simpler selectors (fewer parts, no '~' or :nth-child on a long list) read it faster")
    quick = inspect(str(page), replace(settings, selector_seconds=60), selectors=Selectors("li", "a", "a"))
    assert quick.error is None and quick.ingested.entries
