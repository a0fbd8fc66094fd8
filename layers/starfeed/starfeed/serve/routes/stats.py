"""The operator's views: the statistics dashboard and the health check."""

from __future__ import annotations

import time

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from starfeed.formats import DEFAULT
from starfeed.serve.responses import PAGE_HEADERS, Served, text


def router(served: Served) -> Router:
    routes = Router()
    storage = served.storage

    @routes.get("/healthz")
    def healthz():
        if not storage.blobs.has_feed(DEFAULT.file("feed")):
            return text(503, "starting: the first feed has not been rendered yet\n")
        return text(200, "ok\n")

    @routes.get("/stats", compress=True)
    def dashboard():
        from starfeed.render.html import github_notice
        from starfeed.render.summary import load_sources_summary
        from starfeed.serve.dashboard import render_dashboard

        storage.counters.flush()  # this instance's latest counts belong on the page
        now = time.time()
        notice = github_notice(storage.hosts.pause_of(storage.settings.github_host, now))
        # The sources as the renderer last summarized them: no request scans the sources table.
        rows, built_at = load_sources_summary(storage.blobs) or ([], None)
        body = render_dashboard(storage.counters.days(7), served.cache.summary(), rows, now, notice,
                                sources_at=built_at,
                                budget=(storage.settings.analyzer_daily_calls, storage.settings.analyzer_daily_tokens),
                                rule_sets=served.rule_sets())
        return Response(200, "text/html; charset=utf-8", body.decode(),
                        {"Cache-Control": "no-store", **PAGE_HEADERS})

    return routes
