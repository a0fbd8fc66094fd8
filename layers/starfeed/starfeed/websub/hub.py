"""What starfeed asks of WebSub hubs, through the SSRF guard like every request it makes: as a
publisher, that the hub our feeds announce (STARFEED_WEBSUB_HUB) fetch the feeds a render changed
(WebSub section 7; a failure is logged by the caller, and the next render tells the hub again); as a
subscriber, that a source's hub push its topic to our callback, or stop (section 5.1)."""

from __future__ import annotations

import requests

from starfeed import USER_AGENT
from starfeed.fetch.guard import allowed_networks
from starfeed.fetch.http import guarded
from starfeed.fetch.stage import describe
from starfeed.settings import Settings

PING_SECONDS = 5.0  # a hub answers a publish ping at once; it fetches the feed later


def callback_url(settings: Settings, source_id: str, token: str) -> str:
    """Where the hub verifies and pushes: unguessable (its token), one per subscription."""
    return f"{settings.public_url.rstrip('/')}/websub/{source_id}/{token}"


def ask(hub: str, mode: str, topic: str, callback: str, secret: str | None, settings: Settings) -> str | None:
    """A subscription request (hub.mode subscribe or unsubscribe); the hub answers 202 and
    verifies our intent at the callback later. None, or why the hub did not accept it."""
    form = {"hub.mode": mode, "hub.topic": topic, "hub.callback": callback}
    if mode == "subscribe":
        form.update({"hub.secret": secret or "", "hub.lease_seconds": str(settings.websub_lease_seconds)})
    session = guarded(None, allowed_networks(settings.allow_private_networks))
    try:
        response = session.post(hub, data=form, headers={"User-Agent": USER_AGENT}, allow_redirects=False,
                                timeout=(settings.connect_timeout, PING_SECONDS))
    except requests.RequestException as exc:
        return f"the hub {hub} could not be reached: {describe(exc)}"
    finally:
        session.close()
    if 200 <= response.status_code < 300:
        return None
    said = " ".join(response.text[:200].split())
    return f"the hub {hub} answered {response.status_code} {response.reason}" + (f": {said}" if said else "")


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
