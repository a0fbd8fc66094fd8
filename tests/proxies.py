"""Loopback egress proxies for tests: an HTTP proxy (absolute-form requests and CONNECT) and a
SOCKS5 one (RFC 1928, with RFC 1929 user and password). Each connects onwards from EGRESS, another
loopback address, so an origin can admit only what came through a proxy; each counts what it
relayed and the credentials it was given."""

from __future__ import annotations

import base64
import socket
import socketserver
import struct
import threading
from urllib.parse import urlsplit

EGRESS = "127.0.0.2"  # where the proxies connect from: loopback, but not the address starfeed uses


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Proxy:
    scheme = ""

    def __init__(self, credentials: tuple[str, str] | None = None):
        self.credentials = credentials  # required when given
        self.relayed: list[str] = []  # host:port of each connection made onwards
        self.refused = 0  # requests without the credentials asked for
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                try:
                    proxy._handle(self.connection, self.rfile)
                except OSError:
                    pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def url(self, credentials: tuple[str, str] | None = None) -> str:
        userinfo = f"{credentials[0]}:{credentials[1]}@" if credentials else ""
        return f"{self.scheme}://{userinfo}127.0.0.1:{self.port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _onwards(self, host: str, port: int) -> socket.socket:
        self.relayed.append(f"{host}:{port}")
        return socket.create_connection((host, port), timeout=10, source_address=(EGRESS, 0))

    def _handle(self, client: socket.socket, rfile) -> None:
        raise NotImplementedError


def _pipe(a: socket.socket, b: socket.socket, first: bytes = b"") -> None:
    """Bytes both ways until either side closes."""
    if first:
        b.sendall(first)

    def one_way(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    other = threading.Thread(target=one_way, args=(b, a), daemon=True)
    other.start()
    one_way(a, b)
    other.join(10)


class HttpProxy(_Proxy):
    """A forward proxy: `GET http://host/path` is sent on as `GET /path`, and CONNECT opens a tunnel."""

    scheme = "http"

    def _handle(self, client: socket.socket, rfile) -> None:
        line = rfile.readline(65537).decode("latin-1")
        method, target, version = line.split()
        headers = []
        while (header := rfile.readline(65537)) not in (b"\r\n", b"\n", b""):
            headers.append(header.decode("latin-1"))
        if self.credentials:
            expected = "Basic " + base64.b64encode(":".join(self.credentials).encode()).decode()
            given = [h.split(":", 1)[1].strip() for h in headers if h.lower().startswith("proxy-authorization:")]
            if given != [expected]:
                self.refused += 1
                client.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n"
                               b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                return
        kept = [h for h in headers if not h.lower().startswith(("proxy-", "connection:"))]
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = self._onwards(host.strip("[]"), int(port))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            _pipe(client, upstream)
            return
        parts = urlsplit(target)
        upstream = self._onwards(parts.hostname, parts.port or 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        head = f"{method} {path} {version}\r\n" + "".join(kept) + "Connection: close\r\n\r\n"
        _pipe(client, upstream, head.encode("latin-1"))


class Socks5Proxy(_Proxy):
    """SOCKS5 CONNECT to an IPv4 address, an IPv6 one or a name (socks5h)."""

    scheme = "socks5"

    def _handle(self, client: socket.socket, rfile) -> None:
        version, count = rfile.read(2)
        methods = rfile.read(count)
        wanted = 2 if self.credentials else 0
        if version != 5 or wanted not in methods:
            self.refused += 1
            client.sendall(b"\x05\xff")
            return
        client.sendall(bytes([5, wanted]))
        if wanted == 2:
            _, length = rfile.read(2)
            user = rfile.read(length).decode()
            (length,) = rfile.read(1)
            password = rfile.read(length).decode()
            if (user, password) != self.credentials:
                self.refused += 1
                client.sendall(b"\x01\x01")
                return
            client.sendall(b"\x01\x00")
        _, command, _, kind = rfile.read(4)
        if kind == 1:
            host = socket.inet_ntop(socket.AF_INET, rfile.read(4))
        elif kind == 4:
            host = socket.inet_ntop(socket.AF_INET6, rfile.read(16))
        else:
            (length,) = rfile.read(1)
            host = rfile.read(length).decode()
        (port,) = struct.unpack("!H", rfile.read(2))
        if command != 1:
            client.sendall(b"\x05\x07\x00\x01" + bytes(6))
            return
        upstream = self._onwards(host, port)
        client.sendall(b"\x05\x00\x00\x01" + socket.inet_aton("0.0.0.0") + struct.pack("!H", 0))
        _pipe(client, upstream)
