"""What starfeed publishes is valid (docs/design.md#feed-content). Every RSS and Atom document the
renderer writes for the inputs below has no error in the W3C Feed Validator
(../shared/tools/validate-feed, run as a subprocess, as a publisher would), and every JSON Feed
validates against both JSON Feed 1.1 schemas in ../shared/corpora/schemas.

The inputs: a representative selection of ../shared/corpora/real-feeds (podcasts, xml:base and
relative links, in-page anchors, non-URI and invalid ids, IRIs, feed-level authors, JSON Feeds,
non-UTF-8, undated items) each as its own feed and all of them as the aggregate and as a
collection; the demo origin's feeds; a GitHub stars collection; the golden inputs of
tests/data/render; the pages of tests/data/selected read by their CSS selectors; and, in one
batch, every real feed as its own feed. Warnings are allowed only of the kinds below, each for a
reason that lies in the source's own data.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest

from starfeed.kinds.github_user import new_account
from starfeed.kinds.registry import kind_of
from starfeed.local import demo
from starfeed.model import Entry, Selectors, Source
from starfeed.parse.github import star_entry, stars_of
from starfeed.parse.ingest import ingest, read_feed, read_selected
from starfeed.render import choose, clean
from starfeed.render.feeds import FeedMeta, render
from starfeed.render.pages import github_meta, mixed
from starfeed.settings import Settings

from conftest import SHARED, shared_corpus

# The W3C validator over real feeds, and the JSON Feed schemas: `make test` runs them, `make test-fast` does not.
pytestmark = pytest.mark.slow

VALIDATOR = SHARED / "tools" / "validate-feed"
NOW = 1_795_262_400.0
BASE = "http://127.0.0.1:3000"
SETTINGS = Settings(max_article_age_days=1_000_000)
LIMIT = Settings().feed_item_limit
SELECTION = [
    "feed-rs/atom__atom_entry_1.xml",  # an invalid urn:uuid as its id
    "feed-rs/atom__atom_example_1.xml",  # enclosure, xml:base, XHTML content
    "feed-rs/atom__atom_mediarss_youtube_1.xml",  # yt: ids, "&" in a plain-text description
    "feed-rs/jsonfeed__jsonfeed_elastic_1.1.json",  # items without content
    "feed-rs/rss0__rss_0.91_spec_1.xml",  # RSS 0.91, undated items
    "feed-rs/rss1__rss_1.0_example_1.xml",  # IRIs as links and ids
    "feed-rs/rss2__rss_2.0_relurl_2.xml",  # relative links, an enclosure
    "netnewswire/DaringFireball.json",  # relative links in content_html
    "netnewswire/DaringFireball.rss",  # xml:base, footnote anchors
    "netnewswire/authors.json",  # feed-level authors, ids with spaces, empty content
    "netnewswire/expertopinionent.atom",  # enclosures, xml:base, XHTML content
    "netnewswire/kc0011.rss",  # not UTF-8
    "netnewswire/pappacoda.atom",  # xml:base, relative links
    "netnewswire/russcox.atom",  # in-page anchors
    "netnewswire/scriptingNews.rss",  # repeated GUIDs, enclosures
    "rss-parser/itunes-keywords-array.rss",  # a podcast
    "rss-parser/many-links.rss",  # WebSub, paging, relative links
]
# Warnings that come from the source's own data, which starfeed passes on faithfully.
ACCEPTED_WARNINGS = {
    "DuplicateUpdated",  # two entries the source dated alike (or undated ones first seen together)
    "NotBlank",  # an entry without a title (Atom requires the element; RFC 4287 lets it be empty)
    "MissingTextualContent",  # an entry with neither summary nor content at its source
    "NonCanonicalURI",  # an id kept as the source gave it (a second "#"), so readers can match it
    "SchemeNotIANARegistered",  # ditto: YouTube's "yt:video:..." ids
    "MissingRealName",  # an author the source names by address only
    "NotSufficientlyUnique",  # a GUID the source made short
    "BadCharacters",  # mojibake in the source's own text
}


# The validator's own entry point (validate-feed's validate(data, base, content_type)), loaded
# once per subprocess: starting it costs more than validating a feed.
DRIVER = """
import json, runpy, sys
validate = runpy.run_path(sys.argv[1])["validate"]
for path, base in json.load(sys.stdin):
    with open(path, "rb") as fh:
        print(json.dumps({"file": path, **validate(fh.read(), base, None)}))
"""


@pytest.fixture(scope="module")
def validator():
    if not VALIDATOR.exists():
        pytest.skip(f"{VALIDATOR} is absent: the W3C Feed Validator lives beside the repository in CI")
    pytest.importorskip("html5lib", reason="the W3C Feed Validator needs html5lib (pip install -e '.[dev]')")

    def validate(documents: dict[str, tuple[bytes, str]], tmp: Path) -> dict[str, dict]:
        """{name: (document, the URL it is served at)} -> {name: the validator's verdict}."""
        files = {}
        for name, (document, url) in documents.items():
            path = tmp / re.sub(r"[^\w.-]", "_", name)
            path.write_bytes(document)
            files[str(path)] = (name, url)
        pairs = [(path, url) for path, (_, url) in files.items()]
        workers = os.cpu_count() or 2

        def run(chunk):
            done = subprocess.run([sys.executable, "-c", DRIVER, str(VALIDATOR)], input=json.dumps(chunk),
                                  capture_output=True, text=True, timeout=600)
            verdicts = [json.loads(line) for line in done.stdout.splitlines()]
            assert len(verdicts) == len(chunk), done.stderr[-2000:]
            return verdicts

        with ThreadPoolExecutor(max_workers=workers) as pool:
            verdicts = [v for chunk in pool.map(run, [pairs[i::workers] for i in range(workers)]) for v in chunk]
        return {files[v["file"]][0]: v for v in verdicts}

    return validate


def ingested(path: Path, source_id: str, url: str) -> tuple[Source, list[Entry]]:
    source = Source(source_id=source_id, url=url, created_at=0, last_success_at=1.0)
    result = ingest(read_feed, path.read_bytes(), url, "application/feed+json" if path.suffix == ".json" else None,
                    source, NOW, SETTINGS)
    assert result.error is None, (path.name, result.error)
    source.title, source.site_url, source.language = result.title, result.link, result.language
    return source, result.entries


def own_feed(source: Source, entries: list[Entry], fmt: str) -> tuple[bytes, str]:
    """A source's feed, as render.job writes it: its newest feed_item_limit entries."""
    meta = FeedMeta(f"s/{source.source_id}/feed", clean.shown(source).title, f"Entries from {source.url}",
                    clean.link(source.site_url) or f"{BASE}/s/{source.source_id}/feed", BASE,
                    language=source.language,
                    origins={source.source_id: clean.origin(source, subscribable=kind_of(source).subscribable,
                                                            site=source.site_url)})
    return render(fmt, meta, choose.newest_first(entries)[:LIMIT], NOW), meta.self_url(fmt)


def mixed_feed(meta: FeedMeta, sources: dict[str, Source], entries: list[Entry], fmt: str) -> tuple[bytes, str]:
    """The aggregate or a collection, as render.job writes them."""
    meta = mixed(meta, sources)
    return render(fmt, meta, choose.for_readers(entries, LIMIT), NOW), meta.self_url(fmt)


def real_feeds(names: list[str]) -> tuple[dict[str, Source], list[Entry]]:
    root = shared_corpus("real-feeds")
    sources, entries = {}, []
    for n, name in enumerate(names):
        source, found = ingested(root / name, f"real{n:03d}", f"https://feeds.example.org/{name}")
        sources[source.source_id] = source
        entries += found
    return sources, entries


def demo_feeds() -> tuple[dict[str, Source], list[Entry]]:
    origin, start = "http://127.0.0.1:3301", NOW - 3600
    sources, entries = {}, []
    for feed in demo.FEEDS:
        source = Source(source_id=f"demo-{feed.slug}", url=origin + feed.path, created_at=0, last_success_at=1.0)
        result = ingest(read_feed, demo.render(feed, origin, start, NOW), source.url, None, source, NOW, SETTINGS)
        assert result.error is None, (feed.path, result.error)
        source.title, source.site_url = result.title, result.link
        sources[source.source_id] = source
        entries += result.entries
    return sources, entries


def github_stars() -> tuple[dict[str, Source], list[Entry]]:
    """GitHub star items (docs/design.md#github-feed): accounts starring repositories, one star
    twice (two people, two items)."""
    settings = Settings()
    repos = [("rust-lang/rust", "Empowering everyone to build reliable & efficient software.", "Rust"),
             ("python/cpython", "The Python programming language", "Python"),
             ("torvalds/linux", None, "C")]
    sources, entries = {}, []
    for n, login in enumerate(["octocat", "hubot", "monalisa"]):
        account = type("Account", (), {"login": login, "user_id": 1000 + n})
        source = new_account(settings, account, NOW)
        body = json.dumps([{"starred_at": f"2026-11-2{n}T0{k}:00:00Z",
                            "repo": {"full_name": name, "html_url": f"https://github.com/{name}",
                                     "description": text, "language": language, "stargazers_count": 1000 * k}}
                           for k, (name, text, language) in enumerate(repos)]).encode()
        sources[source.source_id] = source
        entries += [star_entry(login, star, source.source_id, NOW) for star in stars_of(body)]
    return sources, entries


# A feed that dates an entry in 2099 (docs/design.md#undated-and-future): starfeed writes where it
# orders it, and JSON Feed also the date as the source gave it.
FUTURE_ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Tomorrow</title><id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
<updated>2099-01-01T00:00:00Z</updated><link href="https://tomorrow.example.com/"/><author><name>T</name></author>
<entry><id>https://tomorrow.example.com/far</id><title>Far</title><link href="https://tomorrow.example.com/far"/>
<published>2099-01-01T00:00:00Z</published><updated>2099-01-02T00:00:00Z</updated><summary>far</summary></entry>
<entry><id>https://tomorrow.example.com/near</id><title>Near</title><link href="https://tomorrow.example.com/near"/>
<updated>2026-11-20T00:00:00Z</updated><summary>near</summary></entry></feed>"""


def dated_in_the_future() -> tuple[Source, list[Entry]]:
    source = Source(source_id="future", url="https://tomorrow.example.com/feed.atom", created_at=0,
                    last_success_at=1.0)
    result = ingest(read_feed, FUTURE_ATOM, source.url, None, source, NOW, SETTINGS)
    assert result.error is None and len(result.entries) == 2
    source.title, source.site_url = result.title, result.link
    return source, result.entries


def golden_inputs() -> dict[str, tuple[Source, list[Entry]]]:
    data = Path(__file__).resolve().parent.parent / "data" / "render"
    return {path.name: ingested(path, path.stem, f"https://{path.stem}.example.com/{path.name}")
            for path in sorted(data.iterdir()) if ".expected." not in path.name}


def selected_pages() -> dict[str, tuple[Source, list[Entry]]]:
    """The pages of tests/data/selected that their selectors read, each as its source's entries."""
    data = Path(__file__).resolve().parent.parent / "data" / "selected"
    pages = {}
    for path in sorted(data.glob("*.expected.json")):
        case = json.loads(path.read_text())
        if case["error"]:
            continue
        name = path.name.removesuffix(".expected.json")
        source = Source(source_id=f"page-{name}", url=case["url"], kind="selectors", created_at=0,
                        last_success_at=1.0, selectors=Selectors(**case["selectors"]))
        result = ingest(read_selected, path.with_name(f"{name}.html").read_bytes(), source.url,
                        case["content_type"], source, NOW, SETTINGS)
        assert result.error is None, (name, result.error)
        source.title, source.site_url = result.title, result.link
        pages[name] = source, result.entries
    return pages


def documents() -> dict[str, tuple[bytes, str]]:
    """Every document under test, by a name that says what it is."""
    out: dict[str, tuple[bytes, str]] = {}
    real_sources, real_entries = real_feeds(SELECTION)
    demo_sources, demo_entries = demo_feeds()
    star_sources, star_entries = github_stars()
    goldens = golden_inputs()
    pages = selected_pages()
    for fmt in ("rss", "atom", "json"):
        everything = {**real_sources, **demo_sources, **star_sources}
        out[f"aggregate.{fmt}"] = mixed_feed(FeedMeta("feed", "starfeed", "Everything starfeed follows",
                                                      BASE + "/", BASE), everything,
                                             real_entries + demo_entries + star_entries, fmt)
        out[f"collection-real.{fmt}"] = mixed_feed(FeedMeta("c/real/feed", "starfeed: real", "The real collection",
                                                           f"{BASE}/c/real/", BASE), real_sources, real_entries, fmt)
        out[f"collection-demo.{fmt}"] = mixed_feed(FeedMeta("c/demo/feed", "starfeed: demo", "The demo collection",
                                                           f"{BASE}/c/demo/", BASE), demo_sources, demo_entries, fmt)
        out[f"github.{fmt}"] = mixed_feed(github_meta("c/github/feed", len(star_sources), BASE), star_sources,
                                          star_entries, fmt)
        # An older page (RFC 5005 section 3) of a feed that announces a WebSub hub: first, previous, next
        # and hub links.
        out[f"page-3-with-hub.{fmt}"] = mixed_feed(FeedMeta(
            "c/demo/feed", "starfeed: demo", "The demo collection", f"{BASE}/c/demo/", BASE, query="?before=MjAyNg",
            next_query="?before=MjAyNQ", first_query="", previous_query="?after=MjAyNw", hub="https://hub.example/"),
            demo_sources, demo_entries, fmt)
        by_source = {source_id: [e for e in real_entries + demo_entries if e.feed_id == source_id]
                     for source_id in {**real_sources, **demo_sources}}
        for source_id, source in {**real_sources, **demo_sources}.items():
            out[f"{source_id}-{source.url.rsplit('/', 1)[-1]}.{fmt}"] = own_feed(source, by_source[source_id], fmt)
        for name, (source, entries) in goldens.items():
            out[f"golden-{name}.{fmt}"] = own_feed(source, entries, fmt)
        out[f"dated-in-the-future.{fmt}"] = own_feed(*dated_in_the_future(), fmt)
        for name, (source, entries) in pages.items():
            out[f"selected-{name}.{fmt}"] = own_feed(source, entries, fmt)
    return out


def test_rss_and_atom_have_no_error_in_the_w3c_feed_validator(validator, tmp_path):
    xml = {name: doc for name, doc in documents().items() if not name.endswith(".json")}
    verdicts = validator(xml, tmp_path)
    assert {v["type"] for v in verdicts.values()} == {"RSS 2.0", "Atom 1.0"}
    errors = {name: v["errors"] for name, v in verdicts.items() if v["errors"]}
    assert errors == {}
    warnings = {name: [w for w in v["warnings"] if w["name"] not in ACCEPTED_WARNINGS]
                for name, v in verdicts.items()}
    assert {name: w for name, w in warnings.items() if w} == {}


def test_every_real_feed_as_its_own_feed_has_no_validator_error(validator, tmp_path):
    root = shared_corpus("real-feeds")
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                   and p.suffix not in (".txt", ".tsv") and not p.name.startswith("LICENSE"))
    documents_ = {}
    for n, name in enumerate(names):
        source = Source(source_id=f"r{n:03d}", url=f"https://feeds.example.org/{name}", created_at=0,
                        last_success_at=1.0)
        path = root / name
        content_type = "application/feed+json" if path.suffix == ".json" else None
        result = ingest(read_feed, path.read_bytes(), source.url, content_type, source, NOW, SETTINGS)
        if result.error:
            continue  # not a feed (JSON that is none): recorded as an error, nothing to render
        source.title, source.site_url, source.language = result.title, result.link, result.language
        for fmt in ("rss", "atom"):
            documents_[f"{name}.{fmt}"] = own_feed(source, result.entries, fmt)
    assert len(documents_) > 240
    verdicts = validator(documents_, tmp_path)
    assert {name: v["errors"] for name, v in verdicts.items() if v["errors"]} == {}


URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def json_feed_validators() -> list:
    """Both JSON Feed 1.1 schemas; "uri" checked as RFC 3986 has it (jsonschema checks it only
    with an optional package)."""
    folder = shared_corpus("schemas", "jsonfeed")
    found = []
    for name in ("schemastore-feed-1.1.bundled.json", "sonicdoe-schema-v1.1.json"):
        schema = json.loads((folder / name).read_text())
        cls = jsonschema.validators.validator_for(schema)
        checker = jsonschema.FormatChecker()
        checker.checks("uri")(lambda value: not isinstance(value, str) or bool(URI.fullmatch(value)))
        found.append((name, cls(schema, format_checker=checker)))
    return found


def test_json_feed_validates_against_both_json_feed_1_1_schemas():
    validators = json_feed_validators()
    documents_ = {name: doc for name, doc in documents().items() if name.endswith(".json")}
    assert len(documents_) > 20
    problems = [(name, schema, error.message[:200], list(error.path))
                for name, (document, _) in documents_.items() for schema, check in validators
                for error in check.iter_errors(json.loads(document))]
    assert problems == []
    # The schemas do check something: a feed without items fails both.
    assert all(list(check.iter_errors({"version": "https://jsonfeed.org/version/1.1", "title": "t"}))
               for _, check in validators)
