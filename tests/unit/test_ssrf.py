"""SSRF is closed where the socket is opened, and credentials stay with their origin.

Real servers on loopback. A Listener stands for what must never be reached (a metadata service, an
admin port): it counts the connections it accepts. Fake DNS names go through guard.resolve; a name
the fake does not know fails, so no test ever asks a real DNS server."""

from __future__ import annotations

import base64
import datetime
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from starfeed.fetch import guard
from starfeed.fetch.http import fetch
from starfeed.settings import Settings

from origin import Origin, Reply

ONLY_ORIGIN = Settings(connect_timeout=2, read_timeout=2, fetch_deadline=5, retry_backoff=0.01,
                       allow_private_networks="127.0.0.1/32")  # the Origin's address; not 127.0.0.3
STRICT = Settings(connect_timeout=2, read_timeout=2, fetch_deadline=5, retry_backoff=0.01)


class Listener:
    """A raw socket server that counts accepted connections and answers each with a 200."""

    def __init__(self, host: str = "127.0.0.3", port: int = 0):
        self.sock = socket.create_server((host, port))
        self.host, self.port = self.sock.getsockname()[:2]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nsecret")

    def close(self) -> None:
        # close() alone may leave the port bound while _serve's accept() waits on it (the next
        # test's listener, on the same port, then failed with "Address already in use").
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._thread.join(timeout=5)


class FakeDNS:
    """names: name -> answers; each lookup takes the next answer, and the last one repeats."""

    def __init__(self):
        self.names: dict[str, list[str]] = {}
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[tuple]:
        self.asked.append(host)
        answers = self.names.get(host)
        address = (answers.pop(0) if len(answers) > 1 else answers[0]) if answers else host
        # Numeric only: an unknown name fails here instead of reaching a real DNS server.
        return socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)


@pytest.fixture
def dns(monkeypatch):
    fake = FakeDNS()
    monkeypatch.setattr(guard, "resolve", fake)
    return fake


@pytest.fixture
def listener(origin):
    """On 127.0.0.3 at the Origin's port, so one URL's port reaches either of them."""
    server = Listener("127.0.0.3", int(origin.url.rsplit(":", 1)[1]))
    yield server
    server.close()


def test_an_idn_host_is_looked_up_as_requests_would_send_it(origin, listener, dns):
    # IDNA 2003 (Python's codec) says fussball.test, UTS 46 (requests) xn--fuball-cta.test: the
    # check once looked up the first, the request the second.
    dns.names["fussball.test"], dns.names["xn--fuball-cta.test"] = ["127.0.0.1"], ["127.0.0.3"]
    result = fetch(f"http://fußball.test:{listener.port}/f", ONLY_ORIGIN)
    assert result.error == ("refused: xn--fuball-cta.test resolves to 127.0.0.3, which is a private, loopback "
                            "or link-local address (set STARFEED_ALLOW_PRIVATE_NETWORKS to allow it)")
    assert dns.asked == ["xn--fuball-cta.test"]
    assert listener.accepted == 0 and origin.requests == []


def test_an_idn_name_for_loopback_is_refused_with_the_default_settings(dns):
    server = Listener("127.0.0.1")
    dns.names["xn--fuball-cta.test"] = ["127.0.0.1"]
    try:
        result = fetch(f"http://FUßBALL.test:{server.port}/", STRICT)
        assert result.error.startswith("refused: xn--fuball-cta.test resolves to 127.0.0.1")
        assert server.accepted == 0
    finally:
        server.close()


@pytest.mark.parametrize("settings", [STRICT, ONLY_ORIGIN], ids=["strict", "origin-allowed"])
def test_a_backslash_url_is_refused_before_any_lookup(listener, dns, settings):
    # urlsplit reads host public.test; WHATWG and urllib3 read 127.0.0.x.
    result = fetch(f"http://127.0.0.3:{listener.port}\\@public.test/", settings)
    assert result.error == "refused: the URL contains a backslash, which browsers read as a slash"
    assert listener.accepted == 0 and dns.asked == []


@pytest.mark.parametrize("location", [
    "http://127.0.0.3:{port}\\@public.test/", "http://127.0.0.3:{port}/", "//127.0.0.3:{port}/",
    "\\\\127.0.0.3:{port}/", "http://[::ffff:127.0.0.3]:{port}/", "http://2130706435:{port}/",
    "http://rebind.test:{port}/", "http://evil.test\t@127.0.0.3:{port}/"])
def test_a_redirect_to_the_listener_is_refused(origin, listener, dns, location):
    dns.names["rebind.test"] = ["127.0.0.3"]
    origin.serve("/jump", Reply(302, headers={"Location": location.format(port=listener.port)}))
    result = fetch(origin.url + "/jump", ONLY_ORIGIN)
    assert result.error.startswith("refused"), result.error
    assert result.status is None and listener.accepted == 0
    assert len(origin.hits("/jump")) == 1  # refused, not retried


def test_dns_rebinding_never_reaches_the_second_answer(origin, listener, dns):
    # The first answer is allowed (the Origin), every later one is the listener: the old guard
    # checked the first and let requests connect to the second.
    dns.names["rebind.test"] = ["127.0.0.1", "127.0.0.3"]
    origin.serve("/f", Reply(200, b"feed"))
    first = fetch(f"http://rebind.test:{listener.port}/f", ONLY_ORIGIN)
    assert (first.status, first.body) == (200, b"feed")
    second = fetch(f"http://rebind.test:{listener.port}/f", ONLY_ORIGIN)
    assert second.error.startswith("refused: rebind.test resolves to 127.0.0.3")
    assert listener.accepted == 0
    assert dns.asked == ["rebind.test", "rebind.test"]  # one lookup per connection


def test_one_disallowed_address_among_the_answers_refuses_the_host(origin, dns, monkeypatch):
    origin.serve("/f", Reply(200, b"feed"))
    port = int(origin.url.rsplit(":", 1)[1])
    both = (socket.getaddrinfo("127.0.0.1", port, type=socket.SOCK_STREAM)
            + socket.getaddrinfo("127.0.0.3", port, type=socket.SOCK_STREAM))
    monkeypatch.setattr(guard, "resolve", lambda host, port: both)
    assert fetch(f"http://mixed.test:{port}/f", ONLY_ORIGIN).error.startswith(
        "refused: mixed.test resolves to 127.0.0.3")
    assert origin.requests == []


def test_allow_all_still_fetches_loopback_and_keeps_the_name_in_the_host_header(origin, dns):
    dns.names["feeds.test"] = ["127.0.0.1"]
    origin.serve("/a", Reply(301, headers={"Location": "/b"}))
    origin.serve("/b", Reply(200, b"feed"))
    port = origin.url.rsplit(":", 1)[1]
    result = fetch(f"http://Feeds.TEST:{port}/a", Settings(retry_backoff=0.01, allow_private_networks="1"))
    assert (result.status, result.body, result.url) == (200, b"feed", f"http://feeds.test:{port}/b")
    assert [h["host"] for h in origin.hits("/a") + origin.hits("/b")] == [f"feeds.test:{port}"] * 2
    assert fetch(origin.url + "/b", Settings(allow_private_networks="1")).body == b"feed"


def test_an_environment_proxy_is_not_used(origin, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.3:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.3:9")
    assert fetch(origin.serve("/p", Reply(200, b"direct")), ONLY_ORIGIN).body == b"direct"


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_userinfo_becomes_basic_auth_for_its_own_origin_only(origin):
    other = Origin()  # the same host on another port: another origin
    try:
        origin.serve("/same", Reply(302, headers={"Location": "/feed"}))
        origin.serve("/feed", Reply(200, b"feed"))
        origin.serve("/away", Reply(302, headers={"Location": other.url + "/x"}))
        other.serve("/x", Reply(302, headers={"Location": origin.url + "/feed"}))
        url = origin.url.replace("http://", "http://reader:p%40ss@")
        result = fetch(url + "/same", ONLY_ORIGIN)
        assert result.status == 200 and "@" not in result.url
        assert [h.get("authorization") for h in origin.hits("/same") + origin.hits("/feed")] == \
            [_basic("reader", "p@ss")] * 2
        assert result.request_headers["Authorization"] == "(redacted)"
        assert "p@ss" not in repr(result.request_headers) and "cmVhZGVy" not in repr(result.request_headers)
        origin.requests.clear()
        assert fetch(url + "/away", ONLY_ORIGIN).status == 200
        assert "authorization" in origin.hits("/away")[0]
        assert "authorization" not in other.hits("/x")[0]
        assert "authorization" not in origin.hits("/feed")[0]  # a chain that left never gets it back
    finally:
        other.close()


def test_an_authorization_header_is_not_sent_to_another_port_of_the_same_host(origin):
    other = Origin()
    try:
        origin.serve("/api", Reply(301, headers={"Location": other.url + "/moved"}))
        other.serve("/moved", Reply(200, b"{}"))
        result = fetch(origin.url + "/api", ONLY_ORIGIN, headers={"Authorization": "Bearer sekret"})
        assert result.status == 200
        assert origin.hits("/api")[0]["authorization"] == "Bearer sekret"
        assert "authorization" not in other.hits("/moved")[0]
        assert result.request_headers["Authorization"] == "(redacted)"
    finally:
        other.close()


# HTTPS: the socket goes to the checked address, TLS still verifies the name.

@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    pytest.importorskip("cryptography")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    folder = tmp_path_factory.mktemp("tls")

    def issue(subject, issuer, key, signer, ca: bool, names=()):
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]),
                                            critical=False)
        if ca:
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                decipher_only=False), critical=True)
        return builder.sign(signer, hashes.SHA256())

    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "starfeed test CA")])
    ca = issue(ca_name, ca_name, ca_key, ca_key, True)
    leaf = issue(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "feeds.test")]), ca_name, leaf_key, ca_key,
                 False, ["feeds.test"])
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(pem) + leaf_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return folder / "ca.pem", folder / "leaf.pem"


def test_https_connects_to_the_checked_address_and_verifies_the_name(tls_files, dns):
    import requests

    ca, leaf = tls_files
    seen: dict[str, str | None] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen["host"] = self.headers["Host"]
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(leaf)
    context.sni_callback = lambda sock, name, ctx: seen.__setitem__("sni", name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        dns.names["feeds.test"] = ["127.0.0.1"]
        session = requests.Session()
        session.verify = str(ca)
        result = fetch(f"https://feeds.test:{port}/", ONLY_ORIGIN, session=session)
        assert (result.status, result.body) == (200, b"ok"), result.error
        assert seen == {"sni": "feeds.test", "host": f"feeds.test:{port}"}
        # The certificate names feeds.test, not 127.0.0.1: by address, verification fails.
        refused = fetch(f"https://127.0.0.1:{port}/", ONLY_ORIGIN, session=session)
        assert refused.status is None and "certificate" in refused.error.lower()
    finally:
        server.shutdown()
        server.server_close()
