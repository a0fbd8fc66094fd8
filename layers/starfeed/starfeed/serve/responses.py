"""How the api answers: rendered objects from S3 through the in-process cache, negotiated and per
HTTP caching rules, counted for the dashboard; and the plain answers every route shares."""

from __future__ import annotations

import email.utils
import json
import logging
from collections.abc import Callable

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

from starfeed.enrich.present import threshold
from starfeed.formats import BY_EXTENSION, BY_NAME, EXTENSIONS_SHOWN
from starfeed.serve.cache import FeedCache
from starfeed.serve.negotiate import OFFERED, BadAccept, NotAcceptable, negotiate
from starfeed.stats import Sampler, reader_of
from starfeed.store import Storage
from starfeed.store.blobs import FeedObject
from starfeed.store.limits import PARTITION_KEY_BYTES

log = logging.getLogger(__name__)

# Our pages need no script at all: even markup that slipped through could not run.
PAGE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                "img-src https: http: data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
                "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
FORMAT_OF_EXTENSION = {**{e: f.name for e, f in BY_EXTENSION.items()}, "html": "html"}


class BadQuery(Exception):
    """A query parameter a route cannot use: answered 400 with this text (serve/api.py)."""


class Served:
    """What every router shares: storage, the cache of rendered objects, and the counters."""

    def __init__(self, storage: Storage, cache: FeedCache):
        self.storage, self.cache = storage, cache
        # Disabled metrics are never flushed, yet powertools prints them once 100 values pile up:
        # when they are off (locally), none are added at all.
        self._sampler = Sampler()
        self._rule_sets: tuple[float, tuple[str, ...]] | None = None  # (read at, names)

    @staticmethod
    def header(name: str) -> str | None:
        return BaseRouter.current_event.headers.get(name.lower())

    @staticmethod
    def query(name: str) -> str | None:
        return BaseRouter.current_event.get_query_string_value(name)

    def url_param(self, expected: str) -> str:
        """The url= query parameter when it is an http(s) URL that could be a key: DynamoDB
        refuses an index key over 2,048 bytes, and a reader's query must not become a 500.
        Otherwise BadQuery, which says what was expected."""
        url = self.query("url")
        if not url or not url.startswith(("http://", "https://")) \
                or len(url.encode("utf-8", "surrogatepass")) > PARTITION_KEY_BYTES:
            raise BadQuery(expected)
        return url

    def max_score(self) -> float | None:
        """The max_score= query parameter (enrich.present.threshold), or BadQuery with the reason."""
        try:
            return threshold(self.query("max_score"))
        except ValueError as exc:
            raise BadQuery(str(exc)) from None

    def rule_sets(self) -> tuple[str, ...]:
        """The rule sets that have rules, read from the rule book at most once per cache window
        (settings.api_cache_ttl): a set added or emptied is served or refused within it."""
        now = self.cache.clock()
        if self._rule_sets is None or now - self._rule_sets[0] >= self.cache.ttl:
            self._rule_sets = (now, self.storage.rules.rule_sets())
        return self._rule_sets[1]

    def count(self, fmt: str, hit: bool) -> None:
        """Dashboard counters (sampled when busy); no addresses kept. No CloudWatch metric: API
        Gateway counts requests for free, and a custom metric per format costs $0.30 a month."""
        weight = self._sampler.weight()
        if weight:
            self.storage.counters.add({f"req:{fmt}": weight, f"ua:{reader_of(self.header('User-Agent'))}": weight,
                                       f"cache:{'hit' if hit else 'miss'}": weight})

    def object(self, key: str, negotiated: bool = False, counted_as: str | None = None,
               load: Callable[[str | None], FeedObject | None] | None = None,
               unbuilt: str = "its source is new or unknown") -> Response:
        """A rendered object from the bucket, or what load(etag) builds (a feed filtered by
        max_score, cached per threshold under its own key), as HTTP caching rules answer it."""
        # Every object route may gzip, so shared caches must key on Accept-Encoding too.
        vary = {"Vary": "Accept, Accept-Encoding" if negotiated else "Accept-Encoding"}
        try:
            obj, hit = self.cache.get(key, load or (lambda etag: self.storage.blobs.get_feed(key, if_none_match=etag)))
        except Exception:  # the store failed, or holds what cannot be read: say so
            log.exception("api: /%s could not be served", key)
            return text(503, f"/{key} could not be read or built just now; try again later\n",
                        {**vary, "Retry-After": "300"})
        if obj is None:
            return text(404, f"/{key} has not been built yet: {unbuilt}\n", vary)
        self.count(counted_as or FORMAT_OF_EXTENSION.get(key.rsplit(".", 1)[-1], "other"), hit)
        headers = {**vary, **(PAGE_HEADERS if key.endswith(".html") else {}), **self._links(key),
                   "ETag": obj.etag, "X-Cache": "HIT" if hit else "MISS",
                   "Last-Modified": email.utils.formatdate(obj.last_modified, usegmt=True),
                   "Cache-Control": obj.cache_control or f"public, max-age={self.storage.settings.cache_max_age}"}
        if not_modified(obj, self.header("If-None-Match"), self.header("If-Modified-Since")):
            return Response(304, headers=headers)
        return Response(200, obj.content_type, obj.body.decode("utf-8"), headers)

    def _links(self, key: str) -> dict:
        """A feed's Link header: its own URL (rel="self") and, when one is set, its WebSub hub."""
        if not key.split("?", 1)[0].rsplit("/", 1)[-1].startswith("feed."):
            return {}
        links = [f'<{self.storage.settings.public_url.rstrip("/")}/{key}>; rel="self"']
        if self.storage.settings.websub_hub:
            links.append(f'<{self.storage.settings.websub_hub}>; rel="hub"')
        return {"Link": ", ".join(links)}

    def feed(self, path: str, extension: str | None,
             build: Callable[[str], Callable[[str | None], FeedObject]] | None = None,
             variant: str = "") -> Response:
        """A feed in the format its extension names, or (none) the one the Accept header asks for.
        build(fmt), when given, makes the loader of a variant of the feed (key suffix `variant`)."""
        negotiated = extension is None
        if negotiated:
            try:
                fmt = negotiate(self.header("Accept"))
            except NotAcceptable:
                return text(406, "Not Acceptable. Offered: " + ", ".join(OFFERED) + "\n", {"Vary": "Accept"})
            except BadAccept as exc:
                return text(400, f"{exc}\n")
        elif extension in BY_EXTENSION:
            fmt = BY_EXTENSION[extension].name
        else:
            return text(404, f"unknown feed format .{extension}: expected {EXTENSIONS_SHOWN}\n")
        key = BY_NAME[fmt].file(path)
        if build is None:
            return self.object(key, negotiated=negotiated)
        return self.object(key + variant, negotiated=negotiated, counted_as=fmt, load=build(fmt))


def not_modified(obj: FeedObject, if_none_match: str | None, if_modified_since: str | None) -> bool:
    """RFC 9110 section 13.1: If-None-Match wins; If-Modified-Since only without it."""
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
