"""The lookup APIs (docs/design.md#item-lookup, docs/design.md#site-lookup): an article by its
link, and a site's feeds by its root domain."""

from __future__ import annotations

import re

from aws_lambda_powertools.event_handler.api_gateway import Router

from starfeed.enrich.analysis import score_of
from starfeed.enrich.present import within
from starfeed.serve.responses import Served, json_response, text

SITE_ITEMS = 50


def router(served: Served) -> Router:
    routes = Router()
    storage = served.storage

    @routes.get("/api/item", compress=True)
    def api_item():
        from starfeed.serve.lookup import item_json

        url = served.url_param("expected /api/item?url=ARTICLE_URL (an http or https URL)")
        max_score = served.max_score()
        # The newest copy among the live sources' (a link may be in several feeds: docs/design.md#entry-id);
        # with max_score, the newest that passes it.
        entries = storage.entries.with_link(url)
        sources = storage.sources.get_many({e.feed_id for e in entries}) if entries else {}
        live = [e for e in entries if getattr(sources.get(e.feed_id), "live", False)]
        shown = [e for e in live if e.blocked_by is None]  # a blocked entry is in no feed: not here either
        if not shown:
            return text(404, f"held back by rule {live[0].blocked_by}\n" if live else "unknown link\n")
        passing = within(shown, max_score)
        if not passing:
            scores = [s for s in (score_of(e.analyzer_result) for e in shown) if s is not None]
            why = (f"its framing score {min(scores):g} is above max_score {max_score:g}" if scores
                   else "not analyzed yet")
            return text(404, f"held back by max_score: {why}\n")
        return json_response(item_json(passing[0], sources[passing[0].feed_id]))

    @routes.get("/api/site", compress=True)
    def api_site():
        from starfeed.serve.lookup import interleave, site_json

        root = (served.query("root") or "").strip().lower()
        if not re.fullmatch(r"[a-z0-9.-]{1,253}", root):
            return text(400, "expected /api/site?root=DOMAIN (e.g. example.com)\n")
        sources = [s for s in storage.sources.of_root(root) if s.live]
        if not sources:
            return text(404, "unknown domain\n")
        per_feed = [[e for e in storage.entries.recent(s.source_id, SITE_ITEMS) if e.blocked_by is None]
                    for s in sources]
        return json_response(site_json(root, sources, interleave(per_feed, SITE_ITEMS)))

    return routes
