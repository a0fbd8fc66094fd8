"""Every kind of source starfeed knows, by name. A source of a kind this version does not know
(an item edited by hand) is read as a feed: it is fetched, and fails with the reason."""

from __future__ import annotations

from starfeed.kinds import feed, github_following, github_timeline, github_user, selectors, website
from starfeed.kinds.base import SourceKind
from starfeed.model import Source

KINDS: dict[str, SourceKind] = {kind.name: kind for kind in (
    feed.KIND, website.KIND, selectors.KIND, github_following.KIND, github_user.KIND, github_timeline.KIND)}
# What `source add` subscribes to: a feed, a page's article (--website), a page's items (--items ...).
FEED, WEBSITE, SELECTORS = feed.KIND, website.KIND, selectors.KIND


def kind_of(source: Source) -> SourceKind:
    return named(source.kind)


def named(name: str) -> SourceKind:
    return KINDS.get(name) or feed.KIND
