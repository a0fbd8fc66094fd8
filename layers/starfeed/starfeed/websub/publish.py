"""WebSub §7, publishing: after a render, the hub our feeds announce (STARFEED_WEBSUB_HUB) is told
which of their URLs changed; it fetches them and pushes them to its subscribers. A failure is
logged by the caller, and the next render of that feed tells the hub again."""

from __future__ import annotations

import requests

from starfeed import USER_AGENT
from starfeed.fetch.guard import allowed_networks
from starfeed.fetch.http import guarded
from starfeed.fetch.stage import describe
from starfeed.settings import Settings

PING_SECONDS = 5.0  # a hub answers a publish ping at once; it fetches the feed later


def ping(hub: str, urls: list[str], settings: Settings) -> list[str]:
    """POST hub.mode=publish and hub.url for each URL (one per request: not every hub takes
    several), through the SSRF guard like every request we make. Returns the failures, one line
    each; after a hub that cannot be reached, the other URLs are not tried."""
    failures: list[str] = []
    session = guarded(None, allowed_networks(settings.allow_private_networks))
    try:
        for n, url in enumerate(urls):
            try:
                response = session.post(hub, data={"hub.mode": "publish", "hub.url": url},
                                        headers={"User-Agent": USER_AGENT}, allow_redirects=False,
                                        timeout=(settings.connect_timeout, PING_SECONDS))
            except requests.RequestException as exc:
                failures += [f"{hub} could not be reached ({describe(exc)})"] + [
                    f"{u}: not tried" for u in urls[n + 1:]]
                break
            if not 200 <= response.status_code < 300:
                failures.append(f"{url}: the hub answered {response.status_code} {response.reason}")
    finally:
        session.close()
    return failures
