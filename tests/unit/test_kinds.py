"""Source kinds are a registry (starfeed/kinds): outside it, no production code asks which kind a
source is; it asks the source's kind. These tests hold that, and each kind's answers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from starfeed.kinds.base import DocumentKind, GitHubKind, SourceKind
from starfeed.kinds.registry import FEED, KINDS, SELECTORS, WEBSITE, kind_of
from starfeed.model import GitHubAccount, Source, Status

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "starfeed" / "starfeed"
# Development only (not in the layer): they build sources of every kind on purpose.
OUTSIDE_PRODUCTION = ("kinds", "bench", "local")


def _kind_comparisons(tree: ast.AST) -> list[int]:
    """The lines that compare a kind: `x.kind == ...`, `x.kind in ...`, `kind_of(x) is ...`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for operand in (node.left, *node.comparators):
            if (isinstance(operand, ast.Attribute) and operand.attr == "kind"
                    or isinstance(operand, ast.Call) and getattr(operand.func, "id", None) == "kind_of"):
                found.append(node.lineno)
                break
    return found


def test_no_production_code_outside_the_registry_compares_a_source_s_kind():
    compared = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] in OUTSIDE_PRODUCTION:
            continue
        if lines := _kind_comparisons(ast.parse(path.read_text(), str(path))):
            compared[str(path.relative_to(PACKAGE))] = lines
    assert not compared, f"kinds compared outside starfeed/kinds: {compared}"


def test_the_finder_finds_a_comparison():
    assert _kind_comparisons(ast.parse("if source.kind == 'website': pass")) == [1]
    assert _kind_comparisons(ast.parse("x = kind_of(s) is FEED")) == [1]
    assert _kind_comparisons(ast.parse("x = [s for s in sources if s.kind in PACED]")) == [1]
    assert _kind_comparisons(ast.parse("x = kind_of(s).publishes")) == []


def test_every_kind_is_registered_once_under_its_own_name():
    assert sorted(KINDS) == ["feed", "github-following", "github-timeline", "github-user", "selectors", "website"]
    assert all(isinstance(kind, SourceKind) and name == kind.name for name, kind in KINDS.items())
    assert {name for name, kind in KINDS.items() if isinstance(kind, DocumentKind)} == {"feed", "website", "selectors"}
    assert all(isinstance(kind, (DocumentKind, GitHubKind)) for kind in KINDS.values())  # each can fetch


def test_a_kind_this_version_does_not_know_is_read_as_a_feed():
    assert kind_of(Source("s", "https://example.org/f", kind="mastodon")) is FEED


def source(kind: str, **fields) -> Source:
    fields = {"status": Status.OK, **fields}
    return Source("s1", "https://example.org/feed.xml", kind=kind, collections=["news"], **fields)


@pytest.mark.parametrize(("kind", "publishes", "paced", "targets"), [
    ("feed", True, True, ["feed", "s/s1/feed", "c/news/feed"]),
    ("website", True, True, ["feed", "s/s1/feed", "c/news/feed"]),
    ("selectors", True, True, ["feed", "s/s1/feed", "c/news/feed"]),
    ("github-user", True, False, ["feed", "s/s1/feed", "c/news/feed"]),
    ("github-following", False, False, []),
    ("github-timeline", False, False, []),
])
def test_what_each_kind_publishes_and_where(kind, publishes, paced, targets):
    answers = KINDS[kind]
    assert (answers.publishes, answers.paced, answers.targets(source(kind))) == (publishes, paced, targets)
    assert answers.published(source(kind)) is publishes
    assert not answers.published(source(kind, enabled=False)) and not answers.published(source(kind, status=Status.NEW))


def test_how_each_kind_is_listed_and_subscribed_to():
    base = "https://feeds.test"
    feed = source("feed", title="News", site_url="https://example.org/")
    assert FEED.label(feed) == "News" and FEED.label(source("feed")) == "example.org/feed.xml"
    assert FEED.subscription(feed, base).xml_url == "https://example.org/feed.xml"
    page = source("website", title="Page")
    assert WEBSITE.subscription(page, base).xml_url == "https://feeds.test/s/s1/feed.xml"
    assert WEBSITE.subscription(source("website", status=Status.NEW), base) is None  # not built yet
    # A page read by selectors is crawled as a website page is, and subscribed to through our feed of it.
    assert SELECTORS.crawled and SELECTORS.reader == "read_selected"
    assert SELECTORS.subscription(source("selectors", title="List"), base).xml_url == "https://feeds.test/s/s1/feed.xml"
    account = source("github-user", title="dana", github=GitHubAccount(login="dana", tier="high"))
    github_user = KINDS["github-user"]
    assert github_user.label(account) == "dana (GitHub stars)" and github_user.tier(account) == "high"
    assert github_user.site(account) == "https://github.com/dana"
    assert github_user.subscription(account, base).xml_url == "https://feeds.test/c/github/feed.xml"
    for helper in ("github-following", "github-timeline"):
        assert KINDS[helper].subscription(source(helper), base) is None and KINDS[helper].tier(source(helper)) == "-"
    # Ordered for `source list`: news sources, then GitHub's helpers, then its accounts.
    assert [KINDS[k].list_group for k in ("feed", "website", "selectors", "github-following", "github-timeline",
                                          "github-user")] == [0, 0, 0, 1, 1, 2]
