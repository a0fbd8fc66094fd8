"""The HTML pages: the index of everything, each collection's (GitHub's by activity tier) and each
rule set's."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from starfeed.schedule.github import TIERS
from starfeed.serve.responses import Served, text
from starfeed.serve.routes.feeds import COLLECTION, no_rule_set


def router(served: Served) -> Router:
    routes = Router()

    @routes.get("/", compress=True)
    def index():
        return served.object("index.html")

    @routes.get("/c/<name>", compress=True)
    @routes.get("/c/<name>/", compress=True)
    def collection_index(name: str):
        if not COLLECTION.fullmatch(name):
            return text(404, "no such collection\n")
        tier = served.query("tier")
        if tier is not None and tier not in TIERS:
            return text(400, f"tier is one of {', '.join(TIERS)}\n")
        return served.object(f"c/{name}/index{'-' + tier if tier else ''}.html")

    @routes.get("/r/<name>", compress=True)
    @routes.get("/r/<name>/", compress=True)
    def rule_set_index(name: str):
        if not COLLECTION.fullmatch(name):
            return text(404, "no such rule set\n")
        if name not in served.rule_sets():
            return no_rule_set(name)
        return served.object(f"r/{name}/index.html", unbuilt=f"it is rendered with the set's feed, /r/{name}/feed, "
                                                             "once an entry joins the set")

    return routes
