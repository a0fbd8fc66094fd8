"""formats.py declares the feed formats once: the registry holds together, every format has its
writer, and no other module of the package spells a format's media type or file extension."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from starfeed.formats import BY_EXTENSION, BY_NAME, DEFAULT, FORMATS
from starfeed.render import feeds
from starfeed.render.feeds import FeedMeta, render

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "starfeed" / "starfeed"
# Not the package's code: benchmarks and the embedded stack (neither is in the layer).
OUTSIDE = ("bench", "local")
# Modules that read the feeds others publish: the types and files they name are the web's,
# which the formats starfeed publishes happen to share, not this declaration.
READERS = {"fetch/http.py": "the Accept header of a fetch", "parse/html.py": "feed autodiscovery in HTML",
           "inspect.py": "the type of a local file, by its name"}
# Types that name XML or JSON at large: the REST API, OPML and the summary are served as them.
GENERIC = {"application/xml", "text/xml", "application/json"}
MEDIA_TYPES = {t for f in FORMATS for t in (f.media_type, *f.aliases)} - GENERIC
EXTENSION = "|".join(re.escape(f.extension) for f in FORMATS)
# A feed's file ("feed.xml"), or an extension in prose ("use .xml", "feed[.xml|.atom]").
FILE = re.compile(rf"(?:(?<=\bfeed)|(?<=[\s\[|,(]))\.(?:{EXTENSION})\b")
AFTER_A_FIELD = re.compile(rf"^\.(?:{EXTENSION})\b")  # f"{path}.xml"
# An extension alone, where it is not also a format's name ("xml" is; "json" is both).
BARE = {f.extension for f in FORMATS} - set(BY_NAME)


def test_names_extensions_and_types_are_unique():
    assert len(BY_NAME) == len(BY_EXTENSION) == len(FORMATS)
    types = [t for f in FORMATS for t in (f.media_type, *f.aliases)]
    assert len(types) == len(set(types)), "a media type names one format"
    assert GENERIC <= set(types), "GENERIC lists aliases only"
    assert DEFAULT is FORMATS[0]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_each_format_is_written_by_the_writer_it_names(fmt):
    assert callable(getattr(feeds, fmt.writer))
    meta = FeedMeta("feed", "T", "D", "https://feeds.test/", "https://feeds.test")
    document = render(fmt.name, meta, [], 1_800_000_000)
    assert fmt.file("https://feeds.test/feed").encode() in document  # its self link


def literals(source: str) -> list[tuple[int, str, bool]]:
    """(line, text, follows a field) of every string literal but docstrings; an f-string's
    constant parts one by one."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found, parts = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for before, part in zip([None, *node.values], node.values):
                if isinstance(part, ast.Constant):
                    parts.add(id(part))
                    found.append((part.lineno, part.value, isinstance(before, ast.FormattedValue)))
    found += [(node.lineno, node.value, False) for node in ast.walk(tree)
              if isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in parts and id(node) not in docstrings]
    return sorted(found)


def spelled(source: str) -> list[str]:
    """Where a source spells a feed format's media type or extension."""
    hits = []
    for line, text, follows_a_field in literals(source):
        if (any(t in text.lower() for t in MEDIA_TYPES) or FILE.search(text) or text in BARE
                or (follows_a_field and AFTER_A_FIELD.match(text))):
            hits.append(f"line {line}: {text!r}")
    return hits


def test_the_scan_finds_what_it_looks_for():
    source = '''"""Docstrings may say feed.xml and application/rss+xml."""
a = "application/atom+xml; charset=utf-8"
b = f"{base}/s/{id}/feed.json"
c = f"{path}.atom"
d = "expected feed[.xml|.atom|.json]"
e = ("xml", "json")
f = f"{base}/opml.xml" + "stats/sources.json" + "application/json" + ".json"
'''
    assert [hit.split(":")[0] for hit in spelled(source)] == ["line 2", "line 3", "line 4", "line 5", "line 6"]


SCANNED = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.relative_to(PACKAGE).parts[0] not in OUTSIDE and str(p.relative_to(PACKAGE)) not in READERS)


@pytest.mark.parametrize("path", [p for p in SCANNED if p != "formats.py"])
def test_only_formats_py_spells_a_feed_format(path):
    hits = spelled((PACKAGE / path).read_text())
    assert not hits, f"{path} spells a feed format; read it from starfeed.formats: {hits}"
