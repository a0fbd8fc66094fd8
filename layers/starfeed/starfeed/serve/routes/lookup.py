"""Seed 004's lookup APIs: an article by its link, and a site's feeds by its root domain."""

from __future__ import annotations

import re

from aws_lambda_powertools.event_handler.api_gateway import Router

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
        entry = storage.entries.by_link(url)
        source = storage.sources.get(entry.feed_id) if entry else None
        if entry is None or source is None or not source.enabled:
            return text(404, "unknown link\n")
        return json_response(item_json(entry, source))

    @routes.get("/api/site", compress=True)
    def api_site():
        from starfeed.serve.lookup import interleave, site_json

        root = (served.query("root") or "").strip().lower()
        if not re.fullmatch(r"[a-z0-9.-]{1,253}", root):
            return text(400, "expected /api/site?root=DOMAIN (e.g. example.com)\n")
        sources = [s for s in storage.sources.of_root(root) if s.enabled]
        if not sources:
            return text(404, "unknown domain\n")
        per_feed = [storage.entries.recent(s.source_id, SITE_ITEMS) for s in sources]
        return json_response(site_json(root, sources, interleave(per_feed, SITE_ITEMS)))

    return routes
