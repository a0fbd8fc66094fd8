"""No SSRF: a URL is fetched only when every address its host resolves to is allowed.

Two halves. canonical() turns a URL into the one spelling every parser reads alike (IDNA/UTS 46
host, no userinfo, nothing WHATWG, urllib3 and urlsplit disagree on), or refuses it; that
spelling is both what is requested and what the credentials and the GitHub token are matched
against. connect() is called by urllib3 when it opens a socket (see fetch/http.py): it resolves
the host once, refuses if any address is not allowed, and connects to those checked addresses
only, so a second DNS answer (rebinding) or another parser's reading of the host never decides
where starfeed connects. Every spelling of an address (2130706433, 0x7f000001, 127.1,
::ffff:127.0.0.1) is judged by what getaddrinfo makes of it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit

import idna
from urllib3.util import parse_url

CGNAT = ipaddress.ip_network("100.64.0.0/10")
DEFAULT_PORTS = {"http": 80, "https": 443}
Networks = list[ipaddress.IPv4Network | ipaddress.IPv6Network] | None  # None: every address allowed
Origin = tuple[str, str, int]  # scheme, host, port: where a credential may go

# Control characters, any whitespace (WHATWG silently drops tabs and newlines, urlsplit too), C1.
_UNSAFE = re.compile(r"[\x00-\x20\x7f-\x9f\s]")


class Refused(Exception):
    """A URL starfeed will not fetch, with the reason."""


class Unresolved(Refused):
    """A host whose name does not resolve."""


@dataclass(frozen=True)
class Target:
    url: str  # the canonical URL: what is requested
    origin: Origin
    userinfo: tuple[str, str] | None  # (user, password) from user:pass@, for Basic auth


def allowed_networks(setting: str) -> Networks:
    """STARFEED_ALLOW_PRIVATE_NETWORKS: "1" allows every address (None), "0" or "" none ([]),
    otherwise a comma-separated list of networks to allow, e.g. "127.0.0.0/8"."""
    value = (setting or "").strip().lower()
    if value in ("1", "true", "yes", "on", "all"):
        return None
    if value in ("", "0", "false", "no", "off"):
        return []
    return [ipaddress.ip_network(part.strip(), strict=False) for part in value.split(",") if part.strip()]


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return not (address.is_loopback or address.is_private or address.is_link_local
                or address.is_multicast or address.is_unspecified or address.is_reserved
                or address in CGNAT or not address.is_global)


def check_address(address: str, allowed: Networks, host: str | None = None) -> None:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if allowed is None or is_public(ip):
        return
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
    if any(mapped in network for network in allowed):
        return
    named = f"{host} resolves to {address}, which" if host and host.strip("[]") != address else address
    raise Refused(f"refused: {named} is a private, loopback or link-local address "
                  "(set STARFEED_ALLOW_PRIVATE_NETWORKS to allow it)")


def canonical(url: str, base: str | None = None) -> Target:
    """url (joined to base first, for a redirect's Location) in the one spelling all parsers
    agree on, or Refused. Only http and https; the fragment is dropped (it is never sent)."""
    if _UNSAFE.search(url):  # before urljoin, which would silently drop tabs and newlines
        raise Refused("refused: the URL contains whitespace or control characters")
    if "\\" in url:  # WHATWG reads it as "/" in the authority and path, urlsplit and urllib3 do not
        raise Refused("refused: the URL contains a backslash, which browsers read as a slash")
    if base is not None:
        url = urljoin(base, url)
    scheme, _, rest = url.partition(":")
    if scheme.lower() not in DEFAULT_PORTS:
        raise Refused(f"refused: only http and https URLs are fetched, not {scheme or 'none'}:")
    scheme = scheme.lower()
    if not rest.startswith("//"):
        raise Refused("refused: the URL has no host")
    rest = rest[2:].split("#", 1)[0]
    end = min((i for i in (rest.find(c) for c in "/?") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if authority.count("@") > 1:
        raise Refused("refused: the URL has more than one '@' before its host")
    userinfo, _, hostport = authority.rpartition("@")
    host, port = _host_and_port(hostport, scheme)
    path = tail if tail.startswith("/") else "/" + tail
    target = f"{scheme}://{host}{'' if port == DEFAULT_PORTS[scheme] else f':{port}'}{path}"
    # The same host for urllib3 (what connects) and urlsplit (what the rest of starfeed reads).
    if (parse_url(target).host or "").strip("[]") != (urlsplit(target).hostname or ""):
        raise Refused(f"refused: parsers read the host of {target} differently")
    user, _, password = userinfo.partition(":")
    return Target(target, (scheme, host, port), (unquote(user), unquote(password)) if userinfo else None)


def origin_of(url: str) -> Origin:
    return canonical(url).origin


def show_origin(origin: Origin) -> str:
    scheme, host, port = origin
    return f"{scheme}://{host}" + ("" if port == DEFAULT_PORTS[scheme] else f":{port}")


def _host_and_port(hostport: str, scheme: str) -> tuple[str, int]:
    if hostport.startswith("["):  # an IPv6 literal; a zone (%25eth0) is refused below with the rest
        literal, bracket, port = hostport[1:].partition("]")
        if not bracket or (port and not port.startswith(":")) or "%" in literal:
            raise Refused("refused: the URL's IPv6 address is malformed")
        try:
            host = f"[{ipaddress.IPv6Address(literal).compressed}]"
        except ValueError:
            raise Refused("refused: the URL's IPv6 address is malformed") from None
        port = port[1:]
    else:
        name, _, port = hostport.partition(":")
        if "%" in name:
            raise Refused("refused: the URL's host contains percent-encoded bytes")
        if not name:
            raise Refused("refused: the URL has no host")
        host = _idna(name)
    if port and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise Refused("refused: the URL's port is not a number from 1 to 65535")
    return host, int(port) if port else DEFAULT_PORTS[scheme]


def _idna(name: str) -> str:
    """The host as IDNA/UTS 46 (what requests sends): fußball.test is xn--fuball-cta.test, not
    Python's IDNA 2003 fussball.test."""
    try:
        return idna.encode(name, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        error = exc
    # IDNA 2008 forbids "_", which DNS and every parser accept alike (my_blog.example).
    if name.isascii() and "_" in name:
        try:
            idna.encode(name.replace("_", "a"), uts46=True)
            return name.lower()
        except idna.IDNAError:
            pass
    raise Refused(f"refused: the host {name!r} is not a valid domain name ({error})") from None


def resolve(host: str, port: int) -> list[tuple]:
    """One DNS lookup (tests put a fake resolver here)."""
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)


def check_host(host: str, port: int, allowed: Networks) -> list[tuple]:
    """The host resolved once and every address checked, or Refused (Unresolved). Through a proxy,
    which opens the connection itself, this is the check connect() makes."""
    name = host.strip("[]")
    try:
        infos = resolve(name, port)
    except (socket.gaierror, UnicodeError) as exc:
        raise Unresolved(f"could not resolve {name}: {exc}") from None
    for info in infos:
        check_address(info[4][0], allowed, host)
    return infos


def connect(host: str, port: int, allowed: Networks, timeout: float | None,
            source_address: tuple[str, int] | None = None, socket_options: list | None = None,
            watch: Callable[[socket.socket], None] | None = None) -> socket.socket:
    """A socket to one of host's addresses, each checked before any is tried: the addresses
    connected to are exactly those judged. watch sees each socket before it connects (a fetch's
    deadline shuts it down, however long the connect or a later read would block)."""
    infos = check_host(host, port, allowed)
    error: OSError = OSError(f"{host.strip('[]')} resolves to no address")
    for family, kind, proto, _, address in infos:
        sock = None
        try:
            sock = socket.socket(family, kind, proto)
            if watch is not None:
                watch(sock)
            for option in socket_options or ():
                sock.setsockopt(*option)
            sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(address)
            return sock
        except OSError as exc:
            error = exc
            if sock is not None:
                sock.close()
    raise error
