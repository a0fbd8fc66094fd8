"""A source's request options (docs/design.md#request-options): its own headers, user agent,
cookies and proxy, read from what a person typed, checked, and split into what may be shown and
what only the token store keeps. Pure.

A value that is a credential (an Authorization header, a cookie, a header whose name says token,
key, auth or session, a proxy's user and password, a URL's user:password@) is a secret: the source
keeps its name, the token store its value, and it goes only to the source's own origin."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field, replace
from urllib.parse import quote, unquote, urlsplit

from starfeed.model import RequestOptions

PROXY_SCHEMES = {"http": 80, "https": 443, "socks5": 1080, "socks5h": 1080}
MAX_VALUE = 4096  # characters of one header or cookie value: a server refuses longer ones anyway
MAX_OPTIONS = 32  # headers, or cookies, per source
REDACTED = "(redacted)"
# A header whose name holds one of these carries a credential (X-Api-Key, X-Auth-Token, X-Session-Id...).
_SECRET_PARTS = ("auth", "token", "key", "secret", "session", "cookie", "pass", "credential", "signature")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an HTTP field or cookie name (RFC 9110, RFC 6265)
_UNSAFE_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # what would end or split a header line
_COOKIE_VALUE = re.compile(r'[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*')  # RFC 6265 cookie-octet
# Set by starfeed itself: a person's value would break the request or the conditional GET.
_RESERVED = {"host", "content-length", "transfer-encoding", "connection", "te", "upgrade", "if-none-match",
             "if-modified-since", "accept-encoding", "proxy-authorization", "keep-alive", "trailer"}


class OptionError(ValueError):
    """A request option that cannot be used, with the reason."""


def is_secret_header(name: str) -> bool:
    """Whether a header's value is a credential: kept in the token store, shown redacted."""
    lowered = name.lower()
    return any(part in lowered for part in _SECRET_PARTS)


def parse_header(text: str) -> tuple[str, str]:
    """`Name: value` as (Name, value), or OptionError."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _TOKEN.fullmatch(name):
        # What was given is not repeated: a mistyped header may be all secret ("X-Api-Key=...").
        raise OptionError("--header: not 'Name: value' with a header name of letters, digits and -")
    if name.lower() in _RESERVED:
        raise OptionError(f"--header {name}: set by starfeed itself, not by a source's options")
    if name.lower() == "user-agent":
        raise OptionError("--header User-Agent: give it as --user-agent UA")
    if name.lower() == "cookie":
        raise OptionError("--header Cookie: give each cookie as --cookie 'name=value'")
    _check_value(f"--header {name}", value)
    return name, value


def parse_cookie(text: str) -> tuple[str, str]:
    """`name=value` as (name, value), or OptionError."""
    name, equals, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not equals or not _TOKEN.fullmatch(name):
        raise OptionError("--cookie: not 'name=value' with a cookie name of letters, digits and -")
    _check_value(f"--cookie {name}", value)
    if not _COOKIE_VALUE.fullmatch(value.removeprefix('"').removesuffix('"')):
        raise OptionError(f"--cookie {name}: its value holds a space, a quote, a comma, a semicolon or a backslash, "
                          "which a Cookie header cannot carry")
    return name, value


def parse_user_agent(text: str) -> str:
    value = text.strip()
    if not value:
        raise OptionError("--user-agent: empty (leave it out for starfeed's own)")
    _check_value("--user-agent", value)
    return value


@dataclass(frozen=True)
class Proxy:
    """A proxy URL taken apart: where to connect, and its credentials (secret)."""

    scheme: str
    host: str
    port: int
    userinfo: tuple[str, str] | None = None

    @property
    def shown(self) -> str:
        """Its URL without credentials: what a source keeps and every view shows."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def url(self) -> str:
        """Its URL with its credentials, for the HTTP client alone."""
        if self.userinfo is None:
            return self.shown
        user, password = (quote(part, safe="") for part in self.userinfo)
        return self.shown.replace("://", f"://{user}:{password}@", 1)


def parse_proxy(text: str, option: str = "--proxy") -> Proxy:
    """A proxy URL (http, https, socks5 or socks5h; a host, a port, user:password@ if it needs
    them), or OptionError with the reason."""
    value = text.strip()
    if _UNSAFE_VALUE.search(value) or " " in value or "\\" in value:
        raise OptionError(f"{option}: the URL holds a space, a backslash or a control character")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise OptionError(f"{option}: not a URL with a host and a port from 1 to 65535") from None
    scheme = parts.scheme.lower()
    if scheme not in PROXY_SCHEMES:
        raise OptionError(f"{option}: {scheme + ':' if scheme else 'no scheme'} is no proxy scheme starfeed "
                          f"speaks; use {', '.join(s + '://' for s in PROXY_SCHEMES)}")
    if not parts.hostname:
        raise OptionError(f"{option}: the URL names no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise OptionError(f"{option}: a proxy URL is scheme://[user:password@]host:port, without a path or query")
    if parts.netloc.count("@") > 1:
        raise OptionError(f"{option}: the URL has more than one '@' before its host")
    userinfo = None
    if "@" in parts.netloc:
        userinfo = (unquote(parts.username or ""), unquote(parts.password or ""))
    return Proxy(scheme, parts.hostname.lower(), port or PROXY_SCHEMES[scheme], userinfo)


def proxy_login_stored(proxy: Proxy) -> dict[str, str] | None:
    """STARFEED_PROXY's login as the token store keeps it, with the proxy it is for (None: it needs
    none): a proxy changed later never gets the other one's login."""
    if proxy.userinfo is None:
        return None
    return {"proxy": proxy.shown, "user": proxy.userinfo[0], "password": proxy.userinfo[1]}


def proxy_login_of(stored: object, proxy: Proxy) -> tuple[str, str]:
    """The (user, password) the token store keeps for this proxy; OptionError when it is not as
    starfeed wrote it, or is the login of another proxy."""
    how = "`starfeed proxy set URL` stores it again"
    if not (_text_map(stored) and isinstance(stored, dict) and {"proxy", "user", "password"} <= stored.keys()):
        raise OptionError(f"STARFEED_PROXY's login in the token store is not as starfeed wrote it: {how}")
    if stored["proxy"] != proxy.shown:
        raise OptionError(f"the login in the token store is for the proxy {stored['proxy']}, not STARFEED_PROXY's "
                          f"{proxy.shown}: {how}")
    return stored["user"], stored["password"]


@dataclass
class Secrets:
    """A source's secret values, as the token store keeps them: {header name: value}, {cookie
    name: value}, and its proxy's [user, password]."""

    headers: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    proxy: tuple[str, str] | None = None

    def stored(self) -> dict[str, object]:
        return {"headers": self.headers, "cookies": self.cookies, "proxy": list(self.proxy) if self.proxy else None}

    @classmethod
    def of(cls, stored: object) -> Secrets:
        """What the token store gave back; OptionError when it is not what starfeed wrote."""
        if not isinstance(stored, dict):
            raise OptionError("its secret values in the token store are not a JSON object")
        headers, cookies, proxy = stored.get("headers") or {}, stored.get("cookies") or {}, stored.get("proxy")
        proxy_fits = proxy is None or (isinstance(proxy, list) and len(proxy) == 2
                                       and all(isinstance(p, str) for p in proxy))
        if not (_text_map(headers) and _text_map(cookies) and proxy_fits):
            raise OptionError("its secret values in the token store are not as starfeed wrote them")
        return cls(dict(headers), dict(cookies), (proxy[0], proxy[1]) if proxy else None)

    @property
    def values(self) -> list[str]:
        """Every secret value, to search for in what is shown (tests) and to keep out of it."""
        return [*self.headers.values(), *self.cookies.values(), *(p for p in self.proxy or () if p)]


def _text_map(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


@dataclass(frozen=True)
class Asked:
    """The request options a command gave: each None when not given (kept as it was)."""

    headers: list[str] | None = None
    user_agent: str | None = None
    cookies: list[str] | None = None
    proxy: str | None = None
    no_proxy: bool = False
    login: tuple[str, str] | None = None  # (user, password) taken off the URL: its Basic credentials

    @property
    def given(self) -> bool:
        return any(v is not None for v in (self.headers, self.user_agent, self.cookies, self.proxy, self.login)) \
            or self.no_proxy


def login_off(url: str) -> tuple[str, tuple[str, str] | None]:
    """A URL's user:password@ taken off: the URL without it (the rest as typed), and (user,
    password) percent-decoded, or None when it has none. The authority ends where a browser ends it
    (at /, ?, # or a backslash), and its last @ ends the userinfo, as in a browser."""
    scheme, separator, rest = url.strip().partition("://")
    if not separator:
        return url, None
    end = min((i for i in (rest.find(c) for c in "/?#\\") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:end].rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    login = (unquote(user), unquote(password))
    return f"{scheme}://{host}{rest[end:]}", login if any(login) else None


def with_login(url: str, asked: Asked) -> tuple[str, Asked]:
    """The URL without its user:password@, and asked sending them as Basic credentials: a URL's
    login is kept and sent as the source's other secrets are."""
    url, login = login_off(url)
    return url, (replace(asked, login=login) if login else asked)


def basic_credentials(login: tuple[str, str]) -> str:
    """An Authorization header's value for a user and password (RFC 7617, UTF-8)."""
    return "Basic " + base64.b64encode(":".join(login).encode()).decode("ascii")


def apply(asked: Asked, options: RequestOptions | None, secrets: Secrets | None) -> tuple[RequestOptions, Secrets]:
    """The options and secrets a source has once asked is applied to what it had: headers given
    replace its headers (an empty --header '' clears them), cookies likewise, a user agent
    replaces it (empty: starfeed's own), --proxy sets the proxy and --no-proxy clears it; a login
    taken off the URL is its Authorization header. OptionError names the first value that cannot
    be used."""
    if asked.proxy is not None and asked.no_proxy:
        raise OptionError("--proxy sets a proxy and --no-proxy clears it: give one or the other")
    options = options or RequestOptions()
    secrets = secrets or Secrets()
    result, kept = RequestOptions(**vars(options)), Secrets(dict(secrets.headers), dict(secrets.cookies),
                                                           secrets.proxy)
    if asked.headers is not None:
        given = [parse_header(h) for h in asked.headers if h.strip()]
        if len(given) > MAX_OPTIONS:
            raise OptionError(f"--header: {len(given)} headers; at most {MAX_OPTIONS}")
        result.headers = [[n, v] for n, v in given if not is_secret_header(n)]
        result.secret_headers = [n for n, _ in given if is_secret_header(n)]
        kept.headers = {n: v for n, v in given if is_secret_header(n)}
    if asked.login is not None:
        if any(h.partition(":")[0].strip().lower() == "authorization" for h in asked.headers or ()):
            raise OptionError("the URL's user:password@ and --header Authorization are both credentials: "
                              "give one or the other")
        result.secret_headers = [n for n in result.secret_headers if n.lower() != "authorization"] + ["Authorization"]
        kept.headers = {**{n: v for n, v in kept.headers.items() if n.lower() != "authorization"},
                        "Authorization": basic_credentials(asked.login)}
        _check_value("the URL's user:password@", kept.headers["Authorization"])
    if asked.cookies is not None:
        cookies = dict(parse_cookie(c) for c in asked.cookies if c.strip())
        if len(cookies) > MAX_OPTIONS:
            raise OptionError(f"--cookie: {len(cookies)} cookies; at most {MAX_OPTIONS}")
        result.cookies, kept.cookies = list(cookies), cookies
    if asked.user_agent is not None:
        result.user_agent = parse_user_agent(asked.user_agent) if asked.user_agent.strip() else None
    if asked.no_proxy:
        result.proxy, kept.proxy = None, None
    elif asked.proxy is not None:
        proxy = parse_proxy(asked.proxy)
        result.proxy, kept.proxy = proxy.shown, proxy.userinfo
    result.proxy_credentials = kept.proxy is not None
    return result, kept


def request_headers(options: RequestOptions | None, secrets: Secrets | None) -> tuple[dict[str, str], dict[str, str]]:
    """(headers any hop may carry, headers for the source's own origin only): the user agent and
    the plain headers, then the secret headers and the Cookie header."""
    if options is None:
        return {}, {}
    # Checked again as at `source add`: a stored item may have been edited by hand.
    public = dict(_stored_header(pair) for pair in options.headers)
    if options.user_agent:
        public["User-Agent"] = parse_user_agent(options.user_agent)
    secrets = secrets or Secrets()
    private = dict(secrets.headers)
    if secrets.cookies:
        private["Cookie"] = "; ".join(f"{n}={v}" for n, v in secrets.cookies.items())
    return public, private


def _stored_header(pair: object) -> tuple[str, str]:
    if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)):
        raise OptionError("a stored header is not a [name, value] pair")
    return parse_header(f"{pair[0]}: {pair[1]}")


def sent_to(hop_origin: tuple[str, str, int], owner: tuple[str, str, int] | None) -> bool:
    """Whether a hop may carry the source's secrets: only when it is the origin they came with
    (scheme, host and port); a chain that left it never gets them back (the caller drops owner)."""
    return owner is not None and hop_origin == owner


def shown(options: RequestOptions | None) -> dict[str, object] | None:
    """The options as every view shows them: secret values as (redacted), the proxy without
    credentials."""
    if options is None or not options.configured:
        return None
    return {"headers": {**dict(options.headers), **dict.fromkeys(options.secret_headers, REDACTED)},
            "user_agent": options.user_agent, "cookies": dict.fromkeys(options.cookies, REDACTED),
            "proxy": options.proxy}


def described(options: RequestOptions | None, global_proxy: str | None = None) -> str | None:
    """The options in a few words (`source list`, `source show`, `inspect`): which headers and
    cookies it sends (names only) and the proxy it goes through."""
    parts = []
    if options is not None:
        names = [n for n, _ in options.headers] + list(options.secret_headers)
        if names:
            parts.append("headers " + ", ".join(names))
        if options.user_agent:
            parts.append(f"user agent {options.user_agent!r}")
        if options.cookies:
            parts.append("cookies " + ", ".join(options.cookies))
    proxy = via(options, global_proxy)
    if proxy:
        parts.append(f"through proxy {proxy}")
    return "; ".join(parts) or None


def via(options: RequestOptions | None, global_proxy: str | None) -> str | None:
    """The proxy a source's requests go through, as shown: its own, else STARFEED_PROXY's (with
    `(STARFEED_PROXY)` after it), else None."""
    if options is not None and options.proxy:
        return options.proxy
    if global_proxy:
        try:
            return parse_proxy(global_proxy, "STARFEED_PROXY").shown + " (STARFEED_PROXY)"
        except OptionError:
            return "STARFEED_PROXY (unusable)"
    return None


def _check_value(option: str, value: str) -> None:
    if _UNSAFE_VALUE.search(value):
        raise OptionError(f"{option}: its value holds a line break or a control character")
    if len(value) > MAX_VALUE:
        raise OptionError(f"{option}: a value of {len(value):,} characters; at most {MAX_VALUE:,}")
    if not value.isascii():
        raise OptionError(f"{option}: its value is not ASCII (HTTP headers are; percent-encode it)")
