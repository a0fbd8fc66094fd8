"""No SSRF: a URL is fetched only when every address its host resolves to is public.

Checked after DNS resolution, so every spelling of an address (decimal 2130706433, hex
0x7f000001, IPv4-mapped ::ffff:127.0.0.1) is judged by what it resolves to, and again on every
redirect and against the address actually connected to.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

CGNAT = ipaddress.ip_network("100.64.0.0/10")


class Refused(Exception):
    """A URL starfeed will not fetch, with the reason."""


def allowed_networks(setting: str) -> list | None:
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


def check_address(address: str, allowed: list | None) -> None:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if allowed is None or is_public(ip):
        return
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
    if any(mapped in network for network in allowed):
        return
    raise Refused(f"refused: {address} is a private, loopback or link-local address "
                  "(set STARFEED_ALLOW_PRIVATE_NETWORKS to allow it)")


def check_url(url: str, allowed: list | None) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise Refused(f"refused: only http and https URLs are fetched, not {parts.scheme or 'none'}:")
    host = parts.hostname
    if not host:
        raise Refused("refused: the URL has no host")
    if allowed is None:
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise Refused("refused: the URL's port is not a number") from None
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise Refused(f"could not resolve {host}: {exc}") from None
    for info in infos:
        check_address(info[4][0], allowed)
