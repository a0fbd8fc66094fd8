"""An HTTP server that does what API Gateway's HTTP API does for the template's routes: it picks
the route (and so the function) a request takes, authorizes it, turns it into a payload 2.0
event, and the function's response back into HTTP. A route with IAM authorization answers only
loopback callers here: they stand for the principals the owner allows on AWS."""

from __future__ import annotations

import base64
import ipaddress
import logging
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

from starfeed.local.runtime import Function

log = logging.getLogger(__name__)


GREEDY = "{proxy+}"
PAYLOAD_BYTES = 10 * 1024 * 1024  # API Gateway's HTTP API takes a request body of 10 MB at most
# What API Gateway puts in requestContext.authorizer.iam once a SigV4 signature is verified.
LOCAL_PRINCIPAL = {"accessKey": "local", "accountId": "123456789012", "callerId": "local",
                   "cognitoIdentity": None, "principalOrgId": None,
                   "userArn": "arn:aws:iam::123456789012:user/local", "userId": "local"}


@dataclass(frozen=True)
class Route:
    method: str  # GET, POST, … or ANY
    path: str  # /, /{proxy+}, /api/v1/{proxy+}
    function: str  # the logical id of the function it invokes
    iam: bool  # Auth: { Authorizer: AWS_IAM }

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"


def http_routes(stack) -> list[Route]:
    """Every HttpApi event of the template's functions."""
    routes = []
    for logical_id, resource in stack.of_type("AWS::Serverless::Function").items():
        for event in (resource["Properties"].get("Events") or {}).values():
            if event["Type"] == "HttpApi":
                props = event["Properties"]
                routes.append(Route(props.get("Method", "ANY").upper(), props["Path"], logical_id,
                                    (props.get("Auth") or {}).get("Authorizer") == "AWS_IAM"))
    return routes


def route_for(routes: list[Route], method: str, path: str) -> Route | None:
    """API Gateway's choice: the exact path, else the greedy path with the longest prefix; of
    those, the method's own route before ANY."""
    def fits(route: Route) -> bool:
        if route.method not in (method, "ANY"):
            return False
        if route.path.endswith(GREEDY):
            prefix = route.path[:-len(GREEDY)]
            return path.startswith(prefix) and len(path) > len(prefix)
        return route.path == path
    candidates = [r for r in routes if fits(r)]
    if not candidates:
        return None
    return max(candidates, key=lambda r: (not r.path.endswith(GREEDY), len(r.path), r.method != "ANY"))


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def from_this_machine(address: str, headers) -> bool:
    """A caller on this machine: a loopback connection that no proxy or tunnel relayed. A tunnel
    (ssh -R, cloudflared) connects from loopback too, but names the public host it was reached at,
    or says whom it forwards for."""
    if not is_loopback(address) or any(headers.get(h) for h in ("X-Forwarded-For", "Forwarded", "X-Real-IP")):
        return False
    host = (headers.get("Host") or "").rsplit(":", 1)[0].strip("[]").lower()
    return host in ("localhost", "") or is_loopback(host)


def http_api_event(method: str, target: str, headers: dict[str, str], body: bytes,
                   source_ip: str, route: Route | None = None) -> dict:
    parts = urlsplit(target)
    now = time.time()
    lowered: dict[str, str] = {}
    for name, value in headers.items():  # HTTP API joins repeated headers with commas
        key = name.lower()
        lowered[key] = f"{lowered[key]},{value}" if key in lowered else value
    query: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value
    path = unquote(parts.path) or "/"  # HTTP API decodes the path (and only the path) before invoking
    route_key = route.key if route else "GET /" if path == "/" else f"GET /{GREEDY}"
    event = {
        "version": "2.0", "routeKey": route_key, "rawPath": path, "rawQueryString": parts.query,
        "headers": lowered,
        "requestContext": {
            "accountId": "123456789012", "apiId": "local", "domainName": lowered.get("host", "localhost"),
            "domainPrefix": "local", "requestId": str(uuid.uuid4()), "routeKey": route_key,
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
    if route_key.endswith(GREEDY):
        event["pathParameters"] = {"proxy": path[len(route_key.split(" ", 1)[1]) - len(GREEDY):]}
    if route and route.iam:
        event["requestContext"]["authorizer"] = {"iam": LOCAL_PRINCIPAL}
    if body:
        event["body"] = base64.b64encode(body).decode()
    return event


class ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    # Set once the stack is up; until then requests get a 503.
    functions: dict[str, Function] | None = None
    routes: list[Route] = []


def serve(host: str, port: int) -> ApiServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _handle(self):
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                return self._reply(411, {"content-type": "application/json"}, b'{"message":"Length Required"}')
            length = self.headers.get("Content-Length") or "0"
            if not (length.isascii() and length.isdigit()):
                return self._reply(400, {"content-type": "application/json"}, b'{"message":"Bad Request"}')
            if int(length) > PAYLOAD_BYTES:  # refused unread, as API Gateway refuses it
                self.close_connection = True
                return self._reply(413, {"content-type": "application/json"}, b'{"message":"Request Entity Too Large"}')
            body = self.rfile.read(int(length)) if int(length) else b""
            if self.server.functions is None:
                return self._reply(503, {"content-type": "text/plain"}, b"starting\n")
            route = route_for(self.server.routes, self.command, unquote(urlsplit(self.path).path) or "/")
            if route is None:  # as API Gateway answers a request no route takes
                return self._reply(404, {"content-type": "application/json"}, b'{"message":"Not Found"}')
            if route.iam and not from_this_machine(self.client_address[0], self.headers):
                return self._reply(403, {"content-type": "application/json"}, b'{"message":"Forbidden"}')
            event = http_api_event(self.command, self.path, dict(self.headers.items()), body,
                                   self.client_address[0], route)
            try:
                response = self.server.functions[route.function].invoke(event)
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

        def __getattr__(self, name: str):
            # Every method reaches the routes (an ANY route takes QUERY or TRACE too), as on AWS.
            if name.startswith("do_"):
                return self._handle
            raise AttributeError(name)

        def log_message(self, fmt, *args):
            log.debug("api: " + fmt, *args)

    return ApiServer((host, port), Handler)
