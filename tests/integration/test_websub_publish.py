"""WebSub publishing (docs/design.md#websub): with a hub configured, each render tells it which feed
URLs changed; a hub that fails is told again at the next render."""

import logging
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs

from starfeed.local.loopback import Loopback, reply
from starfeed.render.job import render_targets
from starfeed.sources import add_source
from starfeed.store import Storage

from origin import Reply, rss


class Hub:
    """A hub that records publish pings and answers each with the next status given."""

    def __init__(self, *statuses: int):
        self.pings: list[dict[str, list[str]]] = []
        self.statuses = list(statuses)
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                hub.pings.append(parse_qs(body))
                status = hub.statuses.pop(0) if hub.statuses else 204
                reply(self, status, b"", "text/plain")

            def log_message(self, *args):
                pass

        self._server = Loopback(Handler)
        self.url = f"{self._server.url}/hub"

    def close(self):
        self._server.close()


def test_each_render_pings_the_hub_with_every_format_url_and_a_failure_is_told_again(
        stack, storage, origin, caplog):
    hub = Hub(503)
    try:
        source = add_source(storage, origin.serve("/pinged.xml", Reply(200, rss(("p1", "Pinged")))),
                            time.time() - 3600, backfill=1)[0]
        stack.run_cycle()
        with_hub = Storage(replace(storage.settings, websub_hub=hub.url))
        target = f"s/{source.source_id}/feed"
        with caplog.at_level(logging.WARNING):
            assert render_targets(with_hub, [target]).announced == [target]  # built when read
        # The hub answered 503 to the first URL and was told of the others.
        assert ([p["hub.url"] for p in hub.pings]
                == [[f"http://feeds.test/{target}.{ext}"] for ext in ("xml", "atom", "json")])
        assert all(p["hub.mode"] == ["publish"] for p in hub.pings)
        assert "was not told of 1 of 3 feed URLs" in caplog.text and "503" in caplog.text
        render_targets(with_hub, [target])
        assert len(hub.pings) == 6  # told again, all of them
        # Without a hub, nothing is sent.
        render_targets(storage, [target])
        assert len(hub.pings) == 6
    finally:
        hub.close()


def test_a_hub_that_cannot_be_reached_costs_one_try_per_render(stack, storage, origin, caplog):
    source = add_source(storage, origin.serve("/unpinged.xml", Reply(200, rss(("u1", "Unpinged")))),
                        time.time() - 3600, backfill=1)[0]
    stack.run_cycle()
    gone = Storage(replace(storage.settings, websub_hub="http://127.0.0.1:9/hub"))
    with caplog.at_level(logging.WARNING):
        report = render_targets(gone, [f"s/{source.source_id}/feed"])
    assert report.announced and not report.failed  # the feed is served whatever the hub does
    assert "could not be reached" in caplog.text and "not tried" in caplog.text
