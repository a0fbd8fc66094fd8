"""Conditional GET with timeouts, a total deadline, a body limit and a clear reason per status.

Every request goes through GuardedAdapter: urllib3 opens its sockets with guard.connect, which
resolves the host once, checks every address and connects to a checked one; the Host header and
TLS (SNI, certificate) keep the name. Through a proxy named explicitly (a source's, or
STARFEED_PROXY), the socket goes to the proxy, and the target's host is resolved and checked
before each request all the same (docs/design.md#request-options)."""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

from starfeed import USER_AGENT
from starfeed.fetch import guard
from starfeed.fetch.guard import Networks, Refused, Unresolved, allowed_networks, canonical
from starfeed.fetch.headers import answer_failure, parse_retry_after
from starfeed.fetch.options import (
    REDACTED,
    OptionError,
    Secrets,
    basic_credentials,
    parse_proxy,
    proxy_login_of,
    request_headers,
    sent_to,
)
from starfeed.model import FailureClass, RequestOptions, host_of
from starfeed.settings import Settings

MAX_REDIRECTS = 5
MAX_VALIDATOR = 1024  # characters of an ETag or Last-Modified kept for the next request
ACCEPT = ("application/rss+xml, application/atom+xml, application/feed+json, "
          "application/xml;q=0.9, text/xml;q=0.9, text/html;q=0.5, */*;q=0.1")


REDIRECTS = (301, 302, 303, 307, 308)
PERMANENT = (301, 308)
RETRIES = 3  # for 5xx and network faults, inside one fetch (docs/design.md#github-failures)


@dataclass
class FetchResult:
    url: str  # the URL finally answered, after redirects
    status: int | None  # None when no HTTP response arrived
    permanent_redirect: str | None = None  # where a chain of only permanent redirects led
    transient: bool = False  # a 5xx or network fault: worth another try
    request_headers: dict[str, str] = field(default_factory=dict)
    headers: CaseInsensitiveDict = field(default_factory=CaseInsensitiveDict)  # as HTTP compares names
    body: bytes = b""
    error: str | None = None
    retry_after: float | None = None
    elapsed: float = 0.0
    refused: bool = False  # not asked for: the site's robots.txt disallows it
    failure: FailureClass | None = None  # what the error was, in its class

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def body_sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()

    @property
    def validators(self) -> tuple[str | None, str | None]:
        """(ETag, Last-Modified) worth keeping for the next conditional GET. A server may send
        64 KB of either; kept on the source item and sent back, that is only a cost: longer ones
        are not kept, and the next fetch is unconditional."""
        return tuple(value if value and len(value) <= MAX_VALIDATOR else None
                     for value in (self.headers.get("ETag"), self.headers.get("Last-Modified")))


class _Guarded:
    """A urllib3 connection whose socket comes from guard.connect (resolved once, every address
    checked, a checked one connected to). A Refused passes through urllib3 and requests as is."""

    def __init__(self, *args, allowed: Networks, **kwargs) -> None:
        self.allowed = allowed
        super().__init__(*args, **kwargs)

    def _new_conn(self) -> socket.socket:
        timeout = self.timeout if isinstance(self.timeout, (int, float)) else socket.getdefaulttimeout()
        deadline: _Deadline | None = getattr(_running, "deadline", None)
        try:
            return guard.connect(self._dns_host, self.port, self.allowed, timeout,
                                 self.source_address, self.socket_options,
                                 watch=deadline.watch if deadline else None)
        except TimeoutError as exc:  # what urllib3's own _new_conn raises, for requests to read
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out. "
                                            f"(connect timeout={self.timeout})") from exc
        except OSError as exc:
            raise NewConnectionError(self, f"Failed to establish a new connection: {exc}") from exc


_running = threading.local()  # .deadline: the _Deadline of the fetch this thread runs


class _Deadline:
    """One fetch's total deadline, over every hop and retry. When it passes, every socket the
    fetch opened is shut down, which wakes a connect or recv blocked on it: a server trickling
    its headers or body a byte at a time never trips the per-read timeout."""

    def __init__(self, seconds: float) -> None:
        self.expired = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        _running.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        _running.deadline = None

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
        if self.expired.is_set():
            _shut(sock)

    def _expire(self) -> None:
        self.expired.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # wakes a connect or recv blocked in the fetching thread
    except OSError:
        pass


class _GuardedHTTPConnection(_Guarded, HTTPConnection):
    pass


class _GuardedHTTPSConnection(_Guarded, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    """http and https through guarded connections; `allowed` reaches them as a pool keyword
    (urllib3 hands unknown pool keywords to the connection)."""

    def __init__(self, allowed: Networks) -> None:
        self.allowed = allowed
        super().__init__()

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": partial(_HTTPPool, allowed=self.allowed),
                                                   "https": partial(_HTTPSPool, allowed=self.allowed)}

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        """Connections to the proxy itself: its address is allowed because a person named it (the
        target's is checked before each request, guard.check_host). An HTTP(S) proxy's sockets still
        come from guard.connect, so the fetch's deadline shuts them."""
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = {"http": partial(_HTTPPool, allowed=None),
                                              "https": partial(_HTTPSPool, allowed=None)}
        return manager


@dataclass(frozen=True)
class Asking:
    """How a source is asked for: headers every hop carries (its user agent, headers that are no
    credential), headers for its own origin only (credentials, its cookies), and the proxy URL
    (with its credentials) its requests go through."""

    headers: dict[str, str] = field(default_factory=dict)
    secret_headers: dict[str, str] = field(default_factory=dict)
    proxy: str | None = None


def asking(options: RequestOptions | None, secrets: Secrets | None, settings: Settings,
           proxy_login: Callable[[], object] | None = None) -> Asking:
    """A source's options and secret values as one fetch's Asking; its own proxy, else
    STARFEED_PROXY, with the login proxy_login reads from the token store (the store's
    Secrets.proxy_login: None when there is none, LookupError when it cannot be read) unless its
    URL has one. OptionError when a value cannot be used."""
    public, private = request_headers(options, secrets)
    proxy = None
    if options is not None and options.proxy:
        proxy = parse_proxy(options.proxy)
        if options.proxy_credentials:
            if secrets is None or secrets.proxy is None:
                raise OptionError("its proxy's credentials are not in the token store")
            proxy = replace(proxy, userinfo=secrets.proxy)
    elif settings.proxy:
        proxy = parse_proxy(settings.proxy, "STARFEED_PROXY")
        if proxy.userinfo is None and proxy_login is not None:
            try:
                stored = proxy_login()
            except LookupError as exc:  # the token store's Unreadable: it names the entry, never its value
                raise OptionError(f"STARFEED_PROXY's login: {exc}") from None
            if stored is not None:
                proxy = replace(proxy, userinfo=proxy_login_of(stored, proxy))
    return Asking(public, private, proxy.url() if proxy else None)


def guarded(session: requests.Session | None, allowed: Networks) -> requests.Session:
    """session (or a new one) with GuardedAdapter as its only adapter, reused while `allowed`
    stays the same so connections are kept alive across calls."""
    session = session or requests.Session()
    session.trust_env = False  # no environment proxy or .netrc changes where we connect or what we send
    current = session.adapters.get("https://")
    if not (isinstance(current, GuardedAdapter) and current.allowed == allowed):
        for adapter in session.adapters.values():
            adapter.close()
        session.adapters.clear()  # no other mount may bypass the guard
        adapter = GuardedAdapter(allowed)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
    return session


def fetch(url: str, settings: Settings, *, etag: str | None = None,
          last_modified: str | None = None, headers: dict[str, str] | None = None,
          session: requests.Session | None = None, sleep=time.sleep, ask: Asking | None = None) -> FetchResult:
    """One fetch: up to RETRIES more tries with exponential backoff on 5xx (without
    Retry-After) and network faults, all within the total deadline. headers are added to (or
    replace) the defaults. An Authorization header, or user:pass@ in the URL (sent as Basic auth),
    goes to the URL's own origin (scheme, host, port) only: a redirect elsewhere drops it. ask: a
    source's options (Asking); its secret headers go to the URL's own origin only, and never
    again once a redirect left it."""
    started, own = time.monotonic(), session is None
    session = guarded(session, allowed_networks(settings.allow_private_networks))
    try:
        with _Deadline(settings.fetch_deadline) as deadline:
            for attempt in range(RETRIES + 1):
                result = _fetch_once(url, settings, etag, last_modified, headers or {}, session, deadline,
                                     ask or Asking())
                if not result.transient or attempt == RETRIES:
                    break
                pause = settings.retry_backoff * 2 ** attempt
                if time.monotonic() - started + pause > settings.fetch_deadline:
                    break
                sleep(pause)
    finally:
        if own:
            session.close()
    result.elapsed = time.monotonic() - started
    return result


def _fetch_once(url: str, settings: Settings, etag: str | None, last_modified: str | None,
                extra: dict[str, str], session: requests.Session, deadline: _Deadline, ask: Asking) -> FetchResult:
    headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT, "Accept-Encoding": "gzip, deflate, br", **ask.headers,
               **extra}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    credential = None  # an Authorization value, sent only to `owner`, the origin it came with
    for name in [k for k in headers if k.lower() == "authorization"]:
        credential = headers.pop(name)
    # What is kept with the raw response: the names of credentials, never their values.
    result = FetchResult(url=url, status=None, request_headers={**headers, **dict.fromkeys(ask.secret_headers,
                                                                                            REDACTED)})
    permanent = True
    proxies = {"http": ask.proxy, "https": ask.proxy} if ask.proxy else None
    allowed = allowed_networks(settings.allow_private_networks)
    try:
        target = canonical(url)  # what is requested, and what credentials are matched against
        owner, credential = target.origin, credential or _basic(target.userinfo)
        secrets_owner: guard.Origin | None = target.origin  # the source's own secrets go only there
        if credential:
            result.request_headers["Authorization"] = REDACTED
        for hop in range(MAX_REDIRECTS + 1):
            sent = {**headers, "Authorization": credential} if credential else dict(headers)
            if sent_to(target.origin, secrets_owner):
                sent.update(ask.secret_headers)
            if proxies:  # the proxy connects: the target is checked here, as urllib3's connect would
                guard.check_host(target.origin[1], target.origin[2], allowed)
            # The address is checked where urllib3 connects (GuardedAdapter), on every hop.
            response = session.get(target.url, headers=sent, stream=True, allow_redirects=False,
                                   timeout=(settings.connect_timeout, settings.read_timeout), proxies=proxies)
            with response:
                location = session.get_redirect_target(response)  # decoded as requests decodes it
                if location:
                    permanent = permanent and response.status_code in PERMANENT
                    target = canonical(location, base=target.url)
                    result.url = target.url
                    if target.userinfo:  # user:pass@ in a Location is that origin's credential
                        owner, credential = target.origin, _basic(target.userinfo)
                    elif target.origin != owner:
                        credential = None  # a chain that left the origin never gets it back
                    if target.origin != secrets_owner:
                        secrets_owner = None
                    if hop == MAX_REDIRECTS:
                        raise requests.exceptions.TooManyRedirects
                    continue
                result.status = response.status_code
                result.headers = CaseInsensitiveDict(response.headers)
                result.body = _read_limited(response, settings, deadline)
            break
        if result.url != url and permanent:
            result.permanent_redirect = result.url
    except Exception as exc:  # noqa: BLE001 - _reason re-raises what it cannot name
        result.error, result.transient, result.failure = _reason(exc, settings, deadline)
    if result.error is None and deadline.expired.is_set():  # its socket shut: the body ended early
        result.error, result.failure = (f"{FailureClass.TIMEOUT.words}: the response was still arriving when the "
                                        f"fetch's {settings.fetch_deadline:g} s deadline passed "
                                        f"({len(result.body):,} bytes read): not taken as a document",
                                        FailureClass.TIMEOUT)
    if result.error is None and result.status is not None:
        if result.status in (403, 429, 503):  # GitHub sends Retry-After with a 403 too
            result.retry_after = parse_retry_after(result.headers.get("Retry-After"), time.time(),
                                                   settings.backoff_cap)
        failed = answer_failure(result.status, result.headers, result.body, host_of(result.url) or result.url,
                                result.retry_after)
        if failed is not None:
            result.failure, result.error = failed
            # Bot protection's 503 is no fault a retry mends: it only asks the site again.
            result.transient = result.failure is FailureClass.SERVER and result.retry_after is None
    return result


def _basic(userinfo: tuple[str, str] | None) -> str | None:
    return basic_credentials(userinfo) if userinfo is not None else None


class _BodyTooLarge(Exception):
    pass


def _reason(exc: Exception, settings: Settings, deadline: _Deadline) -> tuple[str, bool, FailureClass]:
    """(reason, transient, class) for what ended a fetch."""
    if isinstance(exc, Unresolved):
        return f"{FailureClass.DNS.words}: {exc}", False, FailureClass.DNS
    if isinstance(exc, Refused):
        return str(exc), False, FailureClass.NETWORK
    if deadline.expired.is_set():  # whatever the shut sockets raised
        return (f"{FailureClass.TIMEOUT.words}: no whole answer within the fetch's {settings.fetch_deadline:g} s "
                "deadline: abandoned"), False, FailureClass.TIMEOUT
    if isinstance(exc, _BodyTooLarge):
        return f"response larger than {settings.max_body_bytes} bytes: not read", False, FailureClass.CONTENT
    if isinstance(exc, requests.exceptions.TooManyRedirects):
        return (f"more than {MAX_REDIRECTS} redirects: the URL loops or moved too often", False,
                FailureClass.CLIENT)
    if isinstance(exc, requests.exceptions.InvalidURL):
        return f"invalid URL: {exc}", False, FailureClass.CLIENT
    if isinstance(exc, requests.exceptions.Timeout):
        return f"{FailureClass.TIMEOUT.words}: the server did not answer in time", True, FailureClass.TIMEOUT
    if isinstance(exc, requests.exceptions.SSLError):  # a certificate a retry does not mend
        return f"{FailureClass.TLS.words}: {_root_cause(exc)}", False, FailureClass.TLS
    if isinstance(exc, requests.exceptions.ConnectionError) and _proxy_refused_credentials(exc):
        return (f"{FailureClass.CREDENTIALS.words}: the proxy refuses its credentials ({_root_cause(exc)}): give its "
                "user:password@ again (`source set ID --proxy URL`; STARFEED_PROXY's: `starfeed proxy set URL`)",
                False, FailureClass.CREDENTIALS)
    if isinstance(exc, requests.exceptions.ConnectionError):
        return f"{FailureClass.NETWORK.words}: {_root_cause(exc)}", True, FailureClass.NETWORK
    if isinstance(exc, requests.exceptions.RequestException):
        return f"request failed: {_root_cause(exc)}", True, FailureClass.NETWORK
    raise exc


def _read_limited(response: requests.Response, settings: Settings, deadline: _Deadline) -> bytes:
    """The body, up to the size limit. iter_content yields decompressed bytes, so the limit holds
    against compression bombs; the fetch's _Deadline bounds the time: what arrived before it
    passed is kept (the raw record), and the fetch says it timed out."""
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_content(chunk_size=64 * 1024):
            size += len(chunk)
            if size > settings.max_body_bytes:
                raise _BodyTooLarge
            chunks.append(chunk)
    except Exception:
        if not deadline.expired.is_set():
            raise
    return b"".join(chunks)


def _proxy_refused_credentials(exc: BaseException) -> bool:
    """A SOCKS5 proxy's refused login (PySocks' SOCKS5AuthError), or an HTTP proxy's 407 to CONNECT:
    no retry mends either."""
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ == "SOCKS5AuthError" or " 407 " in f" {seen} ":
            return True
        seen = seen.__context__ if seen.__context__ is not seen else None
    return False


def _root_cause(exc: BaseException) -> str:
    while exc.__context__ is not None and exc.__context__ is not exc:
        exc = exc.__context__
    text = str(exc) or type(exc).__name__
    return text.split(": ", 1)[-1][:200]
