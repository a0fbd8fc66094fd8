"""An HTTP server on a thread, for the origins the local stack, tests and benchmarks serve."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Loopback:
    def __init__(self, handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1", port: int = 0,
                 name: str | None = None):
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True  # a stuck client never holds up the stop
        self.url = f"http://{host}:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True, name=name).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def reply(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str,
          headers: dict[str, str] | None = None) -> None:
    """Answer a request with a whole body: the status, its type and length, any other headers."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)
