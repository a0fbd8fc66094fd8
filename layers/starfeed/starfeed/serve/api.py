"""The api function's routes: rendered objects from S3 through an in-process cache, negotiated
and answered per HTTP caching rules; OPML, lookups and the health check."""

from __future__ import annotations

import email.utils
import json
import re
import time

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from starfeed.formats import EXTENSIONS, FORMATS
from starfeed.schedule.github import TIERS
from starfeed.serve.cache import FeedCache
from starfeed.serve.negotiate import OFFERED, BadAccept, NotAcceptable, negotiate
from starfeed.serve.summary import PUBLISHED_OPML, SUBSCRIPTIONS_OPML
from starfeed.stats import Sampler, reader_of
from starfeed.store import PARTITION_KEY_BYTES, Storage
from starfeed.store.blobs import FeedObject

_SOURCE_ID = re.compile(r"^[0-9a-f]{6,64}$")
_COLLECTION = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
SITE_ITEMS = 50
# Our pages need no script at all: even markup that slipped through could not run.
PAGE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                "img-src https: http: data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
                "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


FORMAT_OF_EXTENSION = {**EXTENSIONS, "html": "html"}


def build_app(storage: Storage, metrics: Metrics | None = None,
              cache: FeedCache | None = None) -> APIGatewayHttpResolver:
    app = APIGatewayHttpResolver()
    cache = cache or FeedCache(ttl=storage.settings.api_cache_ttl)
    metrics = metrics or Metrics()
    # Disabled metrics are never flushed, yet powertools prints them once 100 values pile up:
    # when they are off (locally), none are added at all.
    metrics_on = not is_metrics_disabled()
    sampler = Sampler()

    def count(fmt: str, hit: bool) -> None:
        """Dashboard counters (sampled when busy) and CloudWatch metrics; no addresses kept."""
        if metrics_on:
            metrics.add_metric(name=f"Requests{fmt.capitalize()}", unit=MetricUnit.Count, value=1)
            metrics.add_metric(name="CacheHits" if hit else "CacheMisses", unit=MetricUnit.Count, value=1)
        weight = sampler.weight()
        if weight:
            storage.counters.add({f"req:{fmt}": weight, f"ua:{reader_of(header('User-Agent'))}": weight,
                                  f"cache:{'hit' if hit else 'miss'}": weight})

    def header(name: str) -> str | None:
        return app.current_event.headers.get(name.lower())

    def url_param() -> str | None:
        """The url= query parameter when it is an http(s) URL that could be a key: DynamoDB
        refuses an index key over 2,048 bytes, and a reader's query must not become a 500."""
        url = app.current_event.get_query_string_value("url")
        if not url or not url.startswith(("http://", "https://")):
            return None
        return url if len(url.encode("utf-8", "surrogatepass")) <= PARTITION_KEY_BYTES else None

    def load(key: str) -> tuple[FeedObject | None, bool]:
        return cache.get(key, lambda etag: storage.blobs.get_feed(key, if_none_match=etag))

    def serve_object(key: str, negotiated: bool = False, counted_as: str | None = None) -> Response:
        obj, hit = load(key)
        # Every object route may gzip, so shared caches must key on Accept-Encoding too.
        vary = {"Vary": "Accept, Accept-Encoding" if negotiated else "Accept-Encoding"}
        if obj is None:
            return text(404, f"/{key} has not been built yet: its source is new or unknown\n", vary)
        count(counted_as or FORMAT_OF_EXTENSION.get(key.rsplit(".", 1)[-1], "other"), hit)
        headers = {**vary, **(PAGE_HEADERS if key.endswith(".html") else {}),
                   "ETag": obj.etag, "X-Cache": "HIT" if hit else "MISS",
                   "Last-Modified": email.utils.formatdate(obj.last_modified, usegmt=True),
                   "Cache-Control": obj.cache_control or f"public, max-age={storage.settings.cache_max_age}"}
        if not_modified(obj, header("If-None-Match"), header("If-Modified-Since")):
            return Response(304, headers=headers)
        return Response(200, obj.content_type, obj.body.decode("utf-8"), headers)

    def serve_feed(path: str, extension: str | None) -> Response:
        if extension is None:
            try:
                fmt = negotiate(header("Accept"))
            except NotAcceptable:
                return text(406, "Not Acceptable. Offered: " + ", ".join(OFFERED) + "\n", {"Vary": "Accept"})
            except BadAccept as exc:
                return text(400, f"{exc}\n")
            return serve_object(f"{path}.{FORMATS[fmt][0]}", negotiated=True)
        if extension not in EXTENSIONS:
            return text(404, f"unknown feed format .{extension}: use .xml, .atom or .json\n")
        return serve_object(f"{path}.{extension}")

    @app.get("/", compress=True)
    def index():
        return serve_object("index.html")

    @app.get("/healthz")
    def healthz():
        if not storage.blobs.has_feed("feed.xml"):
            return text(503, "starting: the first feed has not been rendered yet\n")
        return text(200, "ok\n")

    @app.get("/rss", compress=True)
    def by_url():
        """Seed 004's proxy: one source's RSS by the source's own URL."""
        url = url_param()
        if url is None:
            return text(400, "expected /rss?url=ENCODED_FEED_URL (an http or https URL)\n")
        source = storage.catalog.find_source_by_url(url)
        if source is None:
            return text(404, "no source with this URL: subscribe with `starfeed source add`\n")
        if not source.enabled:
            return text(403, "this source is disabled\n")
        return serve_object(f"s/{source.source_id}/feed.xml")

    @app.get("/stats", compress=True)
    def dashboard():
        from starfeed.render.html import github_notice
        from starfeed.serve.dashboard import render_dashboard
        from starfeed.serve.summary import load_sources_summary

        storage.counters.flush()  # this instance's latest counts belong on the page
        now = time.time()
        notice = github_notice(storage.catalog.host_pause(storage.settings.github_host, now))
        # The sources as the renderer last summarized them: no request scans the sources table.
        rows, built_at = load_sources_summary(storage.blobs) or ([], None)
        body = render_dashboard(storage.counters.days(7), cache.summary(), rows, now, notice,
                                sources_at=built_at)
        return Response(200, "text/html; charset=utf-8", body.decode(),
                        {"Cache-Control": "no-store", **PAGE_HEADERS})

    @app.get("/opml.xml", compress=True)
    def opml_published():
        return serve_object(PUBLISHED_OPML, counted_as="opml")

    @app.get("/subscriptions.opml", compress=True)
    def opml_subscriptions():
        return serve_object(SUBSCRIPTIONS_OPML, counted_as="opml")

    @app.get("/api/item", compress=True)
    def api_item():
        from starfeed.serve.lookup import item_json

        url = url_param()
        if url is None:
            return text(400, "expected /api/item?url=ARTICLE_URL (an http or https URL)\n")
        entry = storage.catalog.entry_by_link(url)
        source = storage.catalog.get_source(entry.feed_id) if entry else None
        if entry is None or source is None or not source.enabled:
            return text(404, "unknown link\n")
        return json_response(item_json(entry, source))

    @app.get("/api/site", compress=True)
    def api_site():
        from starfeed.serve.lookup import interleave, site_json

        root = (app.current_event.get_query_string_value("root") or "").strip().lower()
        if not re.fullmatch(r"[a-z0-9.-]{1,253}", root):
            return text(400, "expected /api/site?root=DOMAIN (e.g. example.com)\n")
        sources = [s for s in storage.catalog.sources_of_root(root) if s.enabled]
        if not sources:
            return text(404, "unknown domain\n")
        per_feed = [storage.catalog.recent_entries(s.source_id, SITE_ITEMS) for s in sources]
        return json_response(site_json(root, sources, interleave(per_feed, SITE_ITEMS)))

    @app.get("/c/<name>", compress=True)
    @app.get("/c/<name>/", compress=True)
    def collection_index(name: str):
        if not _COLLECTION.match(name):
            return text(404, "no such collection\n")
        tier = app.current_event.get_query_string_value("tier")
        if tier is not None and tier not in TIERS:
            return text(400, f"tier is one of {', '.join(TIERS)}\n")
        return serve_object(f"c/{name}/index{'-' + tier if tier else ''}.html")

    @app.get("/c/<name>/<filename>", compress=True)
    def collection(name: str, filename: str):
        stem, _, extension = filename.partition(".")
        if stem != "feed" or not _COLLECTION.match(name):
            return text(404, "no such collection feed: expected /c/{collection}/feed[.xml|.atom|.json]\n")
        return serve_feed(f"c/{name}/feed", extension or None)

    @app.get("/s/<source_id>/<filename>", compress=True)
    def one_source(source_id: str, filename: str):
        stem, _, extension = filename.partition(".")
        if stem != "feed" or not _SOURCE_ID.match(source_id):
            return text(404, "no such source feed: expected /s/{source_id}/feed[.xml|.atom|.json]\n")
        # Unsubscribed means unpublished at once, whatever a cache or the bucket still holds.
        enabled = storage.catalog.source_enabled(source_id)
        if enabled is None:
            return text(404, "no such source: it was removed or never added\n")
        if not enabled:
            return text(403, "this source is disabled\n")
        return serve_feed(f"s/{source_id}/feed", extension or None)

    @app.get("/<filename>", compress=True)
    def aggregate(filename: str):
        stem, _, extension = filename.partition(".")
        if stem != "feed":
            return text(404, "not found: see / for the feeds this starfeed serves\n")
        return serve_feed("feed", extension or None)

    @app.not_found
    def not_found(_exc):
        return text(404, "not found: see / for the feeds this starfeed serves\n")

    app.feed_cache = cache  # for the dashboard and the benchmark
    return app


def not_modified(obj: FeedObject, if_none_match: str | None, if_modified_since: str | None) -> bool:
    """RFC 9110 §13.1: If-None-Match wins; If-Modified-Since only without it."""
    if if_none_match is not None:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        return "*" in tags or obj.etag in tags
    since = _http_date(if_modified_since)
    return since is not None and int(obj.last_modified) <= since


def text(status: int, body: str, headers: dict | None = None) -> Response:
    return Response(status, "text/plain; charset=utf-8", body, headers)


def json_response(document: dict) -> Response:
    return Response(200, "application/json", json.dumps(document, ensure_ascii=False),
                    {"Cache-Control": "public, max-age=60"})


def _http_date(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(email.utils.parsedate_to_datetime(value).timestamp())
    except (TypeError, ValueError, OverflowError):
        return None
