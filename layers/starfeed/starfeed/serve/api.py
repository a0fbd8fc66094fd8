"""The api function's resolver: one Powertools Router per concern (serve/routes/), sharing the
cache of rendered objects and the counters (serve/responses.py)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from starfeed.serve.cache import FeedCache
from starfeed.serve.responses import BadQuery, Served, text
from starfeed.serve.routes import feeds, lookup, pages, stats
from starfeed.store import Storage


def build_app(storage: Storage, cache: FeedCache | None = None) -> APIGatewayHttpResolver:
    app = APIGatewayHttpResolver()
    served = Served(storage, cache or FeedCache(ttl=storage.settings.api_cache_ttl))
    for concern in (pages, stats, lookup, feeds):  # feeds last: its /<filename> takes what is left
        app.include_router(concern.router(served))

    @app.not_found
    def not_found(_exc):
        return text(404, "not found: see / for the feeds this starfeed serves\n")

    @app.exception_handler(BadQuery)
    def bad_query(exc: BadQuery):
        return text(400, f"{exc}\n")

    app.feed_cache = served.cache  # for the dashboard and the benchmark
    return app
