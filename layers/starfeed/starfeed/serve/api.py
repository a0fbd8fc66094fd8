"""The api function's routes: pre-rendered objects from S3, negotiated and cached per HTTP."""

from __future__ import annotations

import email.utils
import re

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from starfeed.render.feeds import FORMATS
from starfeed.serve.negotiate import OFFERED, BadAccept, NotAcceptable, negotiate
from starfeed.store import Storage
from starfeed.store.blobs import NotModified

EXTENSIONS = {extension: fmt for fmt, (extension, _) in FORMATS.items()}
_SOURCE_ID = re.compile(r"^[0-9a-f]{6,64}$")


def build_app(storage: Storage) -> APIGatewayHttpResolver:
    app = APIGatewayHttpResolver()

    def header(name: str) -> str | None:
        return app.current_event.headers.get(name.lower())

    def serve_object(key: str, vary: bool = False) -> Response:
        extra = {"Vary": "Accept"} if vary else {}
        try:
            obj = storage.blobs.get_feed(key, if_none_match=header("If-None-Match"))
        except NotModified:
            return Response(304, headers={**extra, "ETag": header("If-None-Match")})
        if obj is None:
            return text(404, f"{key} has not been built yet: its source is new or unknown\n")
        headers = {**extra, "ETag": obj.etag,
                   "Last-Modified": email.utils.formatdate(obj.last_modified, usegmt=True),
                   "Cache-Control": obj.cache_control or f"max-age={storage.settings.cache_max_age}"}
        since = _http_date(header("If-Modified-Since"))
        if header("If-None-Match") is None and since is not None and int(obj.last_modified) <= since:
            return Response(304, headers=headers)
        return Response(200, obj.content_type, obj.body.decode("utf-8"), headers)

    def serve_feed(path: str, extension: str | None) -> Response:
        if extension is None:
            try:
                fmt = negotiate(header("Accept"))
            except NotAcceptable:
                return text(406, "Not Acceptable. Offered: " + ", ".join(OFFERED) + "\n", vary=True)
            except BadAccept as exc:
                return text(400, f"{exc}\n")
            return serve_object(f"{path}.{FORMATS[fmt][0]}", vary=True)
        if extension not in EXTENSIONS:
            return text(404, f"unknown feed format .{extension}: use .xml, .atom or .json\n")
        return serve_object(f"{path}.{extension}")

    @app.get("/")
    def index():
        return serve_object("index.html")

    @app.get("/healthz")
    def healthz():
        if not storage.blobs.has_feed("feed.xml"):
            return text(503, "starting: the first feed has not been rendered yet\n")
        return text(200, "ok\n")

    @app.get("/<filename>")
    def aggregate(filename: str):
        name, _, extension = filename.partition(".")
        if name != "feed":
            raise NotFoundError
        return serve_feed("feed", extension or None)

    @app.get("/s/<source_id>/<filename>")
    def one_source(source_id: str, filename: str):
        name, _, extension = filename.partition(".")
        if name != "feed" or not _SOURCE_ID.match(source_id):
            return text(404, "no such source feed: expected /s/{source_id}/feed[.xml|.atom|.json]\n")
        return serve_feed(f"s/{source_id}/feed", extension or None)

    @app.not_found
    def not_found(_exc):
        return text(404, "not found: see / for the feeds this starfeed serves\n")

    return app


def text(status: int, body: str, vary: bool = False) -> Response:
    return Response(status, "text/plain; charset=utf-8", body, {"Vary": "Accept"} if vary else None)


def _http_date(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(email.utils.parsedate_to_datetime(value).timestamp())
    except (TypeError, ValueError):
        return None
