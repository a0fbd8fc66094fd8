"""A real HTTP server on loopback that serves scripted responses and records requests."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from starfeed.local.loopback import Loopback


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    chunk_delay: float = 0.0  # seconds between chunks of the body
    chunk: int = 1024  # bytes
    length: bool = True  # False: no Content-Length, the body ends when the connection closes


class Origin:
    def __init__(self):
        self.routes: dict[str, Reply | list[Reply]] = {}
        # Paths answered only to requests carrying these headers' values, or from this address.
        self.required: dict[str, tuple[dict[str, str], str | None]] = {}
        self.clients: list[tuple[str, str]] = []  # (path, the address each request came from)
        self.requests: list[tuple[str, dict[str, str]]] = []
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                headers = {k.lower(): v for k, v in self.headers.items()}
                origin.requests.append((self.path, headers))
                origin.clients.append((self.path, self.client_address[0]))
                reply = origin._next(self.path)
                if not origin._admits(self.path, headers, self.client_address[0]):
                    reply = Reply(403, b"not for you")
                time.sleep(reply.delay)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if not reply.length:
                    self.send_header("Connection", "close")
                elif "Content-Length" not in reply.headers:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                try:
                    if reply.chunk_delay:
                        for start in range(0, len(reply.body), reply.chunk):
                            self.wfile.write(reply.body[start:start + reply.chunk])
                            self.wfile.flush()
                            time.sleep(reply.chunk_delay)
                    else:
                        self.wfile.write(reply.body)
                    origin.completed.append(self.path)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.completed: list[str] = []  # paths whose whole body was sent
        self._server = Loopback(Handler)
        self.url = self._server.url

    def _next(self, path: str) -> Reply:
        reply = self.routes.get(path, Reply(404, b"not here"))
        if isinstance(reply, list):
            return reply.pop(0) if len(reply) > 1 else reply[0]
        return reply

    def serve(self, path: str, *replies: Reply, requires: dict[str, str] | None = None,
              client: str | None = None) -> str:
        """requires: a request without each header holding its value gets 403; client: so does
        one from another address (a loopback proxy connects from another one)."""
        self.routes[path] = list(replies) if len(replies) > 1 else replies[0]
        if requires or client:
            self.required[path] = ({k.lower(): v for k, v in (requires or {}).items()}, client)
        return self.url + path

    def _admits(self, path: str, headers: dict[str, str], client: str) -> bool:
        required, address = self.required.get(path, ({}, None))
        return all(value in headers.get(name, "") for name, value in required.items()) and address in (None, client)

    def hits(self, path: str) -> list[dict[str, str]]:
        return [headers for p, headers in self.requests if p == path]

    def close(self):
        self._server.close()


def rss(*items: tuple[str, str], title: str = "Test Feed", extra: str = "",
        newest: float | None = None) -> bytes:
    """items: (guid, title) pairs, newest first, a minute apart from `newest` (default: a
    minute ago)."""
    newest = time.time() - 60 if newest is None else newest
    body = "".join(
        f"<item><title>{t}</title><link>https://example.org/{g}</link><guid isPermaLink='false'>{g}</guid>"
        f"<pubDate>{time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime(newest - 60 * i))}</pubDate>"
        f"<description>About {t}</description></item>"
        for i, (g, t) in enumerate(items))
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title>'
            f"<link>https://example.org/</link><description>d</description>{extra}{body}"
            "</channel></rss>").encode()
