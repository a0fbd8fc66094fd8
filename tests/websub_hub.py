"""A WebSub hub on loopback, written from the W3C Recommendation, for the subscriber's tests: it
takes subscription requests (section 5.1, answering 202), verifies the subscriber's intent at its
callback (section 5.3) or denies (section 5.2), and distributes content signed with the
subscription's secret (sections 7 and 8)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlencode, urlsplit

import requests

from starfeed.local.loopback import Loopback, reply


@dataclass
class Subscription:
    callback: str
    topic: str
    secret: str
    lease: int


class Hub:
    def __init__(self, public_url: str, api_url: str):
        """Callbacks under public_url (the stack's) are reached at api_url (its local bridge)."""
        self.requests: list[dict[str, str]] = []  # each subscription request's form
        self.verifications: list[tuple[str, int, str]] = []  # (mode, status, body) as the callback answered
        self.active: dict[str, Subscription] = {}  # by callback
        self.deny_next = False
        self.refuse_next: int | None = None  # answer the next request with this status instead
        self.grant: int | None = None  # the lease granted, in seconds, whatever was asked (None: as asked)
        self._public, self._api = public_url.rstrip("/"), api_url.rstrip("/")
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0))
                                                     .decode()).items()}
                hub.requests.append(form)
                if hub.refuse_next:
                    status, hub.refuse_next = hub.refuse_next, None
                    return reply(self, status, b"no subscriptions today", "text/plain")
                reply(self, 202, b"", "text/plain")
                threading.Thread(target=hub._verify, args=(form,), daemon=True).start()

            def log_message(self, *args):
                pass

        self._server = Loopback(Handler)
        self.url = f"{self._server.url}/hub"

    def callback(self, url: str) -> str:
        return self._api + url[len(self._public):] if url.startswith(self._public) else url

    def _verify(self, form: dict[str, str]) -> None:
        mode, callback = form["hub.mode"], form["hub.callback"]
        if self.deny_next:
            self.deny_next = False
            query = {"hub.mode": "denied", "hub.topic": form["hub.topic"], "hub.reason": "topic not allowed here"}
            response = requests.get(f"{self.callback(callback)}?{urlencode(query)}", timeout=10)
            self.verifications.append(("denied", response.status_code, response.text))
            return
        challenge, lease = secrets.token_hex(8), self.grant or int(form.get("hub.lease_seconds") or 864000)
        query = {"hub.mode": mode, "hub.topic": form["hub.topic"], "hub.challenge": challenge}
        if mode == "subscribe":
            query["hub.lease_seconds"] = str(lease)
        response = requests.get(f"{self.callback(callback)}?{urlencode(query)}", timeout=10)
        self.verifications.append((mode, response.status_code, response.text))
        if response.status_code // 100 == 2 and response.text == challenge:  # section 5.3: confirmed
            if mode == "subscribe":
                self.active[callback] = Subscription(callback, form["hub.topic"], form.get("hub.secret", ""), lease)
            else:
                self.active.pop(callback, None)

    def verify_as(self, callback: str, **query) -> requests.Response:
        """A verification the subscriber did not ask for, as a forger would send it."""
        return requests.get(f"{self.callback(callback)}?{urlencode(query)}", timeout=10)

    def distribute(self, topic: str, body: bytes, content_type: str = "application/rss+xml",
                   method: str | None = "sha256", secret: str | None = None) -> list[requests.Response]:
        """Section 7: the content to every subscriber of the topic, signed per section 8 (method None: unsigned;
        secret: sign with this one instead of the subscription's, as a forger would)."""
        answers = []
        for subscription in [s for s in self.active.values() if s.topic == topic]:
            headers = {"Content-Type": content_type,
                       "Link": f'<{self.url}>; rel="hub", <{topic}>; rel="self"'}
            if method:
                key = (secret if secret is not None else subscription.secret).encode()
                headers["X-Hub-Signature"] = f"{method}={hmac.new(key, body, getattr(hashlib, method)).hexdigest()}"
            answers.append(requests.post(self.callback(subscription.callback), data=body, headers=headers,
                                         timeout=10))
        return answers

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    def close(self) -> None:
        self._server.close()
