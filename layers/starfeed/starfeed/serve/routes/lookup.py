"""Seed 004's lookup APIs: an article by its link, and a site's feeds by its root domain."""

from __future__ import annotations

import re

from aws_lambda_powertools.event_handler.api_gateway import Router

from starfeed.enrich.present import threshold, within
from starfeed.serve.responses import Served, json_response, text

SITE_ITEMS = 50


def router(served: Served) -> Router:
    routes = Router()
    storage = served.storage

    @routes.get("/api/item", compress=True)
    def api_item():
        from starfeed.serve.lookup import item_json

        url = served.url_param()
        if url is None:
            return text(400, "expected /api/item?url=ARTICLE_URL (an http or https URL)\n")
        try:
            max_score = threshold(served.query("max_score"))
        except ValueError as exc:
            return text(400, f"{exc}\n")
        entry = storage.entries.by_link(url)
        source = storage.sources.get(entry.feed_id) if entry else None
        if entry is None or source is None or not source.live:
            return text(404, "unknown link\n")
        if not within([entry], max_score):
            why = "not analyzed yet" if entry.analyzer_result is None else \
                f"its framing score {entry.analyzer_result.get('score')} is above max_score {max_score:.2f}"
            return text(404, f"held back by max_score: {why}\n")
        return json_response(item_json(entry, source))

    @routes.get("/api/site", compress=True)
    def api_site():
        from starfeed.serve.lookup import interleave, site_json

        root = (served.query("root") or "").strip().lower()
        if not re.fullmatch(r"[a-z0-9.-]{1,253}", root):
            return text(400, "expected /api/site?root=DOMAIN (e.g. example.com)\n")
        sources = [s for s in storage.sources.of_root(root) if s.live]
        if not sources:
            return text(404, "unknown domain\n")
        per_feed = [storage.entries.recent(s.source_id, SITE_ITEMS) for s in sources]
        return json_response(site_json(root, sources, interleave(per_feed, SITE_ITEMS)))

    return routes
