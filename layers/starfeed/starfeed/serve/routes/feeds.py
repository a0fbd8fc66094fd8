"""The feeds: the aggregate, each collection's and each rule set's as the renderer published them,
each source's built when asked (from its stored entries, as the renderer would), in the format
asked for, with their older pages (`?before=CURSOR`, and `?after=CURSOR` for their previous links, RFC 5005 section 3);
the proxy by a source's URL (docs/design.md#feed-proxy) and its max_score; and the OPML lists."""

from __future__ import annotations

import re
from functools import partial

from aws_lambda_powertools.event_handler.api_gateway import Router

from starfeed.cursors import BadCursor, decode_sort_key
from starfeed.formats import BY_NAME, EXTENSIONS_SHOWN
from starfeed.model import FEED_NAME
from starfeed.render.summary import PUBLISHED_OPML, SUBSCRIPTIONS_OPML
from starfeed.serve.responses import Served, text
from starfeed.store.limits import SORT_KEY_BYTES

SOURCE_ID = re.compile(r"^[0-9a-f]{6,64}$")
COLLECTION = FEED_NAME  # a collection's name, or a rule set's
RSS = BY_NAME["rss"].extension  # what /rss serves


def router(served: Served) -> Router:
    routes = Router()
    sources = served.storage.sources

    def feed(path: str, extension: str | None, source=None):
        """The first page (prebuilt, or built now for a source's own feed), or the older page
        `before` (or `after`) names."""
        before, after = served.query("before"), served.query("after")
        if not (before or after or source):
            return served.feed(path, extension)
        if before and after:
            return text(400, "before= or after=, not both\n")
        try:
            before, after = ((decode_sort_key(before, "before", SORT_KEY_BYTES), None) if before else
                             (None, decode_sort_key(after, "after", SORT_KEY_BYTES)) if after else (None, None))
        except BadCursor as exc:
            return text(400, f"{exc}\n")
        from starfeed.serve.variants import page_variant, paged_feed  # lxml: loaded only for pages

        return served.feed(path, extension, paged_feed(served.storage, path, before, after, source),
                           page_variant(before, after))

    @routes.get("/<filename>", compress=True)
    def aggregate(filename: str):
        stem, _, extension = filename.partition(".")
        if stem != "feed":
            return text(404, "not found: see / for the feeds this starfeed serves\n")
        return feed("feed", extension or None)

    @routes.get("/c/<name>/<filename>", compress=True)
    def collection(name: str, filename: str):
        stem, _, extension = filename.partition(".")
        if stem != "feed" or not COLLECTION.fullmatch(name):
            return text(404, "no such collection feed: expected /c/{collection}/feed" + EXTENSIONS_SHOWN + "\n")
        return feed(f"c/{name}/feed", extension or None)

    @routes.get("/r/<name>/<filename>", compress=True)
    def rule_set(name: str, filename: str):
        """A rule set's feed (docs/design.md#rule-sets), while the set has rules."""
        stem, _, extension = filename.partition(".")
        if stem != "feed" or not COLLECTION.fullmatch(name):
            return text(404, "no such rule set feed: expected /r/{set}/feed" + EXTENSIONS_SHOWN + "\n")
        if name not in served.rule_sets():
            return no_rule_set(name)
        path = f"r/{name}/feed"
        if served.query("before") or served.query("after"):
            return feed(path, extension or None)
        return served.feed(path, extension or None, partial(rendered_or_built, path))

    @routes.get("/s/<source_id>/<filename>", compress=True)
    def one_source(source_id: str, filename: str):
        stem, _, extension = filename.partition(".")
        if stem != "feed" or not SOURCE_ID.match(source_id):
            return text(404, "no such source feed: expected /s/{source_id}/feed" + EXTENSIONS_SHOWN + "\n")
        max_score = served.max_score()
        source = sources.get(source_id)
        if max_score is not None:
            return scored(source, extension or None, max_score)
        # Unsubscribed means unpublished at once, whatever a cache still holds.
        return _refused(source) or feed(f"s/{source_id}/feed", extension or None, source)

    @routes.get("/rss", compress=True)
    def by_url():
        """The proxy (docs/design.md#feed-proxy): one source's RSS by the source's own URL."""
        url = served.url_param("expected /rss?url=ENCODED_FEED_URL (an http or https URL)")
        max_score = served.max_score()
        source = sources.find_by_url(url)
        if max_score is not None:
            return scored(source, RSS, max_score)
        return _refused(source) or feed(f"s/{source.source_id}/feed", RSS, source)

    def scored(source, extension: str | None, max_score: float):
        """A source's feed without the items scoring above max_score (docs/design.md#max-score)."""
        refused = _refused(source)
        if refused:
            return refused
        from starfeed.serve.variants import scored_feed, scored_variant  # lxml: loaded only when filtering

        return served.feed(f"s/{source.source_id}/feed", extension, scored_feed(served.storage, source, max_score),
                           scored_variant(max_score))

    def rendered_or_built(path: str, fmt: str):
        """The renderer's object, or until there is one (a new set, whose rules matched nothing
        yet), its first page built now: a set's feed is served from its first rule on."""
        key = BY_NAME[fmt].file(path)

        def load(etag: str | None):
            rendered = served.storage.blobs.get_feed(key, if_none_match=etag)
            if rendered is not None:
                return rendered
            from starfeed.serve.variants import paged_feed  # lxml: loaded only to build one

            return paged_feed(served.storage, path, None, None)(fmt)(etag)

        return load

    @routes.get("/opml.xml", compress=True)
    def opml_published():
        return served.object(PUBLISHED_OPML, counted_as="opml")

    @routes.get("/subscriptions.opml", compress=True)
    def opml_subscriptions():
        return served.object(SUBSCRIPTIONS_OPML, counted_as="opml")

    return routes


def no_rule_set(name: str):
    return text(404, f"no rule set {name}: no rule is in it (`starfeed rules add ... --name {name}` starts one; "
                     "`starfeed rules list` shows the sets)\n")


def _refused(source):
    """404 for a source that is not there (or removed), 403 for a disabled one, else None."""
    if source is None or source.deleted_at is not None:
        return text(404, "no such source: it was removed or never added (subscribe with `starfeed source add`)\n")
    if not source.enabled:
        return text(403, "this source is disabled\n")
    return None
