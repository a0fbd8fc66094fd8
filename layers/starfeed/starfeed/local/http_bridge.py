"""An HTTP server that turns each request into an API Gateway HTTP API (payload 2.0) event for
the api function, and the function's response back into HTTP."""

from __future__ import annotations

import base64
import logging
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from starfeed.local.runtime import Function

log = logging.getLogger(__name__)


def http_api_event(method: str, target: str, headers: dict[str, str], body: bytes,
                   source_ip: str) -> dict:
    parts = urlsplit(target)
    now = time.time()
    lowered: dict[str, str] = {}
    for name, value in headers.items():  # HTTP API joins repeated headers with commas
        key = name.lower()
        lowered[key] = f"{lowered[key]},{value}" if key in lowered else value
    query: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value
    path = parts.path or "/"
    route = "GET /" if path == "/" else "GET /{proxy+}"
    event = {
        "version": "2.0", "routeKey": route, "rawPath": path, "rawQueryString": parts.query,
        "headers": lowered,
        "requestContext": {
            "accountId": "123456789012", "apiId": "local", "domainName": lowered.get("host", "localhost"),
            "domainPrefix": "local", "requestId": str(uuid.uuid4()), "routeKey": route,
            "stage": "$default", "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": source_ip,
                     "userAgent": lowered.get("user-agent", "")}},
        "isBase64Encoded": bool(body),
    }
    if "cookie" in lowered:
        event["cookies"] = [c.strip() for c in lowered["cookie"].split(";")]
    if query:
        event["queryStringParameters"] = query
    if path != "/":
        event["pathParameters"] = {"proxy": path.lstrip("/")}
    if body:
        event["body"] = base64.b64encode(body).decode()
    return event


class ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    api: Function | None = None  # set once the stack is up; until then requests get a 503


def serve(host: str, port: int, api: Function | None = None) -> ApiServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _handle(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.server.api is None:
                return self._reply(503, {"content-type": "text/plain"}, b"starting\n")
            if self.command != "GET":  # the template routes GET only; API Gateway answers so
                return self._reply(404, {"content-type": "application/json"}, b'{"message":"Not Found"}')
            event = http_api_event(self.command, self.path, dict(self.headers.items()), body,
                                   self.client_address[0])
            try:
                response = self.server.api.invoke(event)
            except Exception:
                log.exception("api function failed on %s", self.path)
                return self._reply(500, {"content-type": "application/json"},
                                   b'{"message":"Internal Server Error"}')
            payload = response.get("body") or ""
            data = base64.b64decode(payload) if response.get("isBase64Encoded") else payload.encode()
            headers = dict(response.get("headers") or {})
            for cookie in response.get("cookies") or []:
                headers.setdefault("set-cookie", cookie)
            self._reply(int(response.get("statusCode", 200)), headers, data)

        def _reply(self, status: int, headers: dict, data: bytes):
            self.send_response(status)
            for name, value in headers.items():
                if name.lower() not in ("content-length", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(0 if status == 304 else len(data)))
            try:
                self.end_headers()
                if status != 304:
                    self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                log.debug("api: the client left before its answer to %s", self.path)

        do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

        def log_message(self, fmt, *args):
            log.debug("api: " + fmt, *args)

    server = ApiServer((host, port), Handler)
    server.api = api
    return server
