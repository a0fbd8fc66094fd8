"""Freshness (docs/design.md#target-freshness): how soon readers see what was just rendered, and what was just added.

    python -m starfeed.bench.freshness [--rate SECONDS] [--adds N] [--renders N]

(a) Render -> served. On a local stack (moto), two execution environments of the real api
function, each with its own cache: a busy one, asked for /feed.xml every 50 ms all along (so it
always holds a copy it checked moments ago), and one that cached the old version and was then
left alone. Each new render (a new post fetched and rendered through the queues) is timed from
the renderer's return until each instance serves the new version through its handler. Goal:
within a few seconds (5 s). The busy instance's conditional GETs per hour are held against its
bound: one per object per revalidation window (STARFEED_API_CACHE_TTL).

(b) `source add` -> visible. `starfeed local run` (what `make run` runs: demo origin, simulated
GitHub, scheduler every --rate seconds, fetcher and renderer polling their queues, the HTTP
bridge) in a subprocess; a loopback origin whose feed holds one post dated when it is fetched (a
new source's first fetch keeps only posts newer than the subscription, docs/design.md#first-fetch); `starfeed
source add URL` (the CLI's own code, in this process). A reader asks for /feed.xml while the
fetcher reads the post, so the api checks its copy just before the render (the cache's worst
case); then GET /feed.xml every 100 ms until the post is there. The first add falls anywhere in
the scheduler's period; each later one as soon as the previous is visible, so a few seconds
after a tick when the pipeline is fresh (the worst phase: a whole tick to wait). Goal: at most
one tick + 10 s; split into add -> fetched (waiting for the tick) and fetched -> visible (fetch,
render, the api's window).

Exits 1 when a goal fails.
"""

from __future__ import annotations

import argparse
import contextlib
import email.utils
import io
import json
import logging
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from starfeed.local.loopback import Loopback, reply

RENDER_GOAL = 5.0  # seconds: "every api instance serves the new version within a few seconds"
ADD_SLACK = 10.0  # seconds beyond one scheduler tick from `source add` to /feed.xml
LOCAL_RATE = 60  # seconds: `make run`'s scheduler, rate(1 minute)


class Origin:
    """Feeds on loopback. Each path holds posts, newest first; a post dated None takes the time
    of the request that reads it, as if published the moment the fetcher asks."""

    def __init__(self):
        self.posts: dict[str, list[tuple[str, float | None]]] = {}
        self.requests: list[tuple[str, float]] = []  # (path, time.time())
        self.before_answer = lambda path: None  # runs while the fetcher waits for its answer
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                now = time.time()
                origin.requests.append((self.path, now))
                origin.before_answer(self.path)
                posts = origin.posts.get(self.path)
                body = b"not here" if posts is None else origin.rss(posts, now)
                reply(self, 200 if posts is not None else 404, body, "application/rss+xml")

            def log_message(self, *args):
                pass

        self._server = Loopback(Handler)
        self.url = self._server.url

    def publish(self, path: str, guid: str, published: float | None = None) -> str:
        self.posts.setdefault(path, []).insert(0, (guid, published))
        return self.url + path

    def fetched(self, path: str, after: float) -> float | None:
        return next((at for p, at in self.requests if p == path and at >= after), None)

    @staticmethod
    def rss(posts: list[tuple[str, float | None]], now: float) -> bytes:
        items = "".join(
            f"<item><title>Post {guid}</title><link>https://fresh.example/{guid}</link>"
            f"<guid isPermaLink='false'>{guid}</guid>"
            f"<pubDate>{email.utils.formatdate(int(now if at is None else at), usegmt=True)}</pubDate>"
            f"<description>Post {guid}</description></item>" for guid, at in posts)
        return ("<?xml version='1.0'?><rss version='2.0'><channel><title>Fresh</title>"
                "<link>https://fresh.example/</link><description>d</description>"
                f"{items}</channel></rss>").encode()

    def close(self):
        self._server.close()


def _seconds(values: list[float]) -> dict:
    return {"max_s": round(max(values), 3), "median_s": round(statistics.median(values), 3),
            "each_s": [round(v, 3) for v in values]}


# (a) render -> served ---------------------------------------------------------------------------

def render_to_served(renders: int) -> dict:
    from starfeed.local.http_bridge import http_api_event
    from starfeed.local.stack import LocalStack
    from starfeed.settings import Settings
    from starfeed.sources import add_source
    from starfeed.store import Storage

    origin = Origin()
    state = Path(tempfile.mkdtemp(prefix="starfeed-freshness-"))
    stack = LocalStack({"STARFEED_PUBLIC_URL": "http://feeds.test", "STARFEED_ALLOW_PRIVATE_NETWORKS": "1"},
                       state=state)
    stop = threading.Event()
    try:
        storage = Storage(Settings.from_env(stack.environment))
        window = storage.settings.api_cache_ttl
        busy, idle = stack.functions["ApiFunction"], stack.cold_start("ApiFunction")

        def body(function) -> str:
            return function.invoke(http_api_event("GET", "/feed.xml", {}, b"", "198.51.100.7"))["body"]

        run_id = uuid.uuid4().hex[:8]  # no other text in a feed can contain a post's marker
        url = origin.publish("/a.xml", f"post-0-{run_id}", time.time())
        source, _ = add_source(storage, url, time.time() - 60)
        # The first fetch asks for its renders (the feeds, then the sources summary) apart.
        stack.tick()
        fetcher, renderer = (next(q for q in stack.queues if q.function.logical_id == name)
                             for name in ("FetcherFunction", "RendererFunction"))
        while fetcher.poll():
            pass
        depth = stack.sqs.get_queue_attributes(QueueUrl=stack.queue("RenderQueue"),
                                               AttributeNames=["ApproximateNumberOfMessages"])
        first_fetch_messages = int(depth["Attributes"]["ApproximateNumberOfMessages"])
        stack.drain()
        assert f"post-0-{run_id}" in body(busy) and f"post-0-{run_id}" in body(idle)

        def keep_asking():  # a busy reader on the first instance
            while not stop.wait(0.05):
                body(busy)

        reader = threading.Thread(target=keep_asking, daemon=True)
        started, before = time.monotonic(), dict(busy.module.app.feed_cache.stats)
        reader.start()
        delays: dict[str, list[float]] = {"busy": [], "idle": []}
        render_s = []
        for n in range(1, renders + 1):
            time.sleep(window * n / renders)  # render at a different point of the busy one's window
            guid = f"post-{n}-{run_id}"
            origin.publish("/a.xml", guid, time.time())
            storage.sources.change(source.source_id, {"next_check_at": time.time() - 1})
            began = time.monotonic()
            stack.run_cycle()  # tick, fetch, render: returns once the new feed.xml is in S3
            rendered = time.monotonic()
            render_s.append(rendered - began)
            waiting = {"busy": busy, "idle": idle}
            while waiting:
                for name, function in list(waiting.items()):
                    if guid in body(function):
                        delays[name].append(time.monotonic() - rendered)
                        del waiting[name]
                if time.monotonic() - rendered > 60:
                    raise RuntimeError(f"render {n} not served after 60 s by {sorted(waiting)}")
                time.sleep(0.02)
        stop.set()
        reader.join()
        elapsed = time.monotonic() - started
        stats = busy.module.app.feed_cache.stats
        gets = (stats["revalidations"] - before["revalidations"]) + (stats["misses"] - before["misses"])
        requests = (stats["hits"] + stats["misses"]) - (before["hits"] + before["misses"])
        return {"window_s": window, "renders": renders,
                "busy_instance": _seconds(delays["busy"]), "idle_instance": _seconds(delays["idle"]),
                "fetch_and_render_s": _seconds(render_s)["median_s"],
                "first_fetch_render_messages": first_fetch_messages,
                "busy_instance_s3_gets": {
                    "requests": requests, "conditional_gets": gets, "seconds": round(elapsed, 1),
                    "per_hour": round(gets / elapsed * 3600),
                    # one GET per window, and the first: the bound over this run, then per hour
                    "bound": int(elapsed / window) + 1 if window else None,
                    "bound_per_hour": round(3600 / window) if window else None}}
    finally:
        stop.set()
        stack.close()
        origin.close()
        shutil.rmtree(state, ignore_errors=True)


# (b) `source add` -> visible in /feed.xml ----------------------------------------------------

def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def add_to_visible(rate: int, adds: int, environ: dict[str, str]) -> dict:
    from starfeed.cli import main as cli

    origin = Origin()
    state = Path(tempfile.mkdtemp(prefix="starfeed-freshness-run-"))
    port = _free_port()
    env = {k: v for k, v in environ.items()
           if k not in ("STARFEED_GITHUB_TOKEN", "STARFEED_GITHUB_API_URL", "STARFEED_SOURCES")}
    env.update({"STARFEED_PORT": str(port), "STARFEED_DEMO_PORT": str(_free_port()),
                "STARFEED_GITHUB_DEMO_PORT": str(_free_port()), "STARFEED_STATE_DIR": str(state),
                "STARFEED_SCHEDULE_RATE": f"rate({rate} seconds)", "PYTHONUNBUFFERED": "1"})
    log_path = state / "local-run.log"
    with open(log_path, "wb") as log_file:
        run = subprocess.Popen([sys.executable, "-m", "starfeed.cli", "local", "run"], env=env,
                               stdout=log_file, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(base + path, timeout=10) as response:
                return response.status, response.read().decode()
        except OSError as exc:
            return getattr(exc, "code", 0) or 0, ""

    saved = {k: os.environ.get(k) for k in ("STARFEED_STATE_DIR",)}
    try:
        started = time.monotonic()
        while get("/healthz")[0] != 200:  # moto up, the demo subscribed, the first cycle done
            if run.poll() is not None or time.monotonic() - started > 180:
                raise RuntimeError(f"`starfeed local run` did not start; see {log_path}")
            time.sleep(0.2)
        startup = time.monotonic() - started
        os.environ["STARFEED_STATE_DIR"] = str(state)  # the CLI finds the stack by its stack.json
        totals, waits, after_fetch = [], [], []
        run_id = uuid.uuid4().hex[:8]
        for n in range(1, adds + 1):
            path, guid = f"/fresh-{n}.xml", f"post-{n}-{run_id}"
            url = origin.publish(path, guid)
            began_wall, began = time.time(), time.monotonic()
            with contextlib.redirect_stdout(io.StringIO()):
                added = cli(["source", "add", url])
            if added != 0:
                raise RuntimeError(f"`starfeed source add {url}` failed")
            added_wall = time.time()  # the CLI may have read the URL itself before adding it
            fetching = threading.Event()

            def reader_asks(asked: str, path=path, fetching=fetching) -> None:
                # A reader asks for /feed.xml while the fetcher reads the new post: the api's
                # copy is checked just before the render, the latest it can be (its worst case).
                if asked == path and not fetching.is_set():
                    fetching.set()
                    get("/feed.xml")

            origin.before_answer = reader_asks
            while not fetching.wait(0.05) or guid not in get("/feed.xml")[1]:
                if time.monotonic() - began > rate + 120:
                    raise RuntimeError(f"add {n} not visible after {rate + 120} s; see {log_path}")
                if fetching.is_set():
                    time.sleep(0.1)
            total = time.monotonic() - began
            fetched = origin.fetched(path, added_wall)
            wait = (fetched - began_wall) if fetched is not None else float("nan")
            totals.append(total)
            waits.append(wait)
            after_fetch.append(total - wait)
        report = {"rate_s": rate, "budget_s": rate + ADD_SLACK, "adds": adds, "startup_s": round(startup, 1),
                  "add_to_visible": _seconds(totals), "add_to_fetched": _seconds(waits),
                  "fetched_to_visible": _seconds(after_fetch)}
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        run.send_signal(signal.SIGINT)  # an orderly stop, as Ctrl+C
        try:
            run.wait(60)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()
        origin.close()
    shutil.rmtree(state, ignore_errors=True)  # kept, with the stack's log, when a step failed
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=LOCAL_RATE,
                        help="seconds between scheduler runs of the local stack (default: make run's)")
    parser.add_argument("--adds", type=int, default=2, help="sources added one after another")
    parser.add_argument("--renders", type=int, default=5, help="renders timed to the api")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    environ = dict(os.environ)  # before the in-process stack sets its own
    report = {"add": add_to_visible(args.rate, args.adds, environ), "render": render_to_served(args.renders)}
    render, add = report["render"], report["add"]
    worst_render = max(render["busy_instance"]["max_s"], render["idle_instance"]["max_s"])
    gets = render["busy_instance_s3_gets"]
    report["ratios"] = {
        "render_to_served_vs_goal": round(worst_render / RENDER_GOAL, 3),
        "add_to_visible_vs_one_tick_plus_10s": round(add["add_to_visible"]["max_s"] / add["budget_s"], 3),
        "fetched_to_visible_vs_10s": round(add["fetched_to_visible"]["max_s"] / ADD_SLACK, 3),
    }
    report["targets"] = {
        "render_to_served_s_goal_5": worst_render <= RENDER_GOAL,
        "add_to_visible_goal_one_tick_plus_10s": add["add_to_visible"]["max_s"] <= add["budget_s"],
        "s3_gets_within_one_per_window": gets["bound"] is None or gets["conditional_gets"] <= gets["bound"],
    }
    print(json.dumps(report, indent=1))
    return 0 if all(report["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
