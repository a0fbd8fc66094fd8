"""`make run`: the stack on an embedded AWS, serving feeds on http://127.0.0.1:3000."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from pathlib import Path

from starfeed.fetch.options import OptionError, parse_proxy, proxy_login_stored
from starfeed.kinds.github_following import new_following
from starfeed.local.demo import DemoOrigin
from starfeed.local.github_sim import GitHubSim, population
from starfeed.local.http_bridge import http_routes, serve
from starfeed.local.runtime import QueueSource, rate_seconds
from starfeed.local.snapshot import SNAPSHOT_FILE, Snapshotter, restore
from starfeed.local.stack import LocalStack
from starfeed.local.token_store import TOKEN_STORE_FILE, TokenStoreFile
from starfeed.observe import log_format
from starfeed.settings import Settings
from starfeed.sources import BadSource, OpmlDocument, OpmlFeed, add_source, read_opml
from starfeed.store import Storage
from starfeed.store.secrets import TOKEN_ENV
from starfeed.subscribe import Refused, add_listed, logins_off

log = logging.getLogger("starfeed.local")
QUIET = ("botocore", "boto3", "pynamodb", "werkzeug", "urllib3", "moto")


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s  %(message)s", datefmt="%H:%M:%S")
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)


def run() -> int:
    configure_logging()
    # Handlers first: a Ctrl+C at any moment, even while starting, asks for the orderly stop
    # below; KeyboardInterrupt would leave the worker threads running. Explicit, too, because a
    # job started in the background inherits SIGINT as ignored.
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    host = os.environ.get("STARFEED_HOST", "127.0.0.1")
    port = int(os.environ.get("STARFEED_PORT", "3000"))
    rate = rate_seconds(os.environ.get("STARFEED_SCHEDULE_RATE", "rate(1 minute)"))
    public_url = os.environ.get("STARFEED_PUBLIC_URL") or f"http://{host}:{port}"
    try:  # a mistyped STARFEED_SOURCES or STARFEED_BACKFILL stops the start, before anything runs
        initial = initial_sources()
    except BadSource as exc:
        log.error("%s", exc)
        return 1
    try:
        server = serve(host, port)  # bound first: a busy port fails before anything starts
    except OSError as exc:
        log.error("cannot listen on %s:%d (%s): stop what uses it, or set STARFEED_PORT",
                  host, port, exc.strerror)
        return 1
    github_sim = start_github_demo()
    overrides = {"STARFEED_PUBLIC_URL": public_url, "STARFEED_ALLOW_PRIVATE_NETWORKS":
                 os.environ.get("STARFEED_ALLOW_PRIVATE_NETWORKS", "1")}
    proxy_login = global_proxy_login()
    if proxy_login:  # the stack, its functions and the CLI see the proxy without its login
        overrides["STARFEED_PROXY"] = proxy_login["proxy"]
    if log_format() == "json":  # exactly what Lambda would log: JSON lines and the EMF metrics
        overrides["POWERTOOLS_METRICS_DISABLED"] = "false"
    stack = LocalStack(overrides)
    log.info("embedded AWS (moto) on %s with every table, bucket and queue of template.yaml",
             stack.endpoint)
    snapshot_path = stack.state / SNAPSHOT_FILE
    if not snapshot_path.exists():
        log.info("no saved state in %s: starting empty", stack.state)
    restore(stack.stack, snapshot_path)
    storage = Storage(Settings.from_env())
    tokens = TokenStoreFile(storage, stack.state / TOKEN_STORE_FILE)
    if restored := tokens.restore():
        log.info("restored %d entries of the local token store (sources' secrets, the proxy's login)", restored)
    snapshots = _Snapshots(stack.stack, snapshot_path, float(os.environ.get("STARFEED_SNAPSHOT_INTERVAL", "60")),
                           tokens)
    if proxy_login:
        storage.secrets.put_proxy_login(proxy_login)
        log.info("STARFEED_PROXY %s: its login is kept in the local token store", proxy_login["proxy"])
    demo = subscribe_initial_sources(storage, github_sim, initial)

    log.info("initial poll cycle…")
    storage.queues.send_render(["feed"])  # the aggregate exists even before any entry
    for _ in range(3):  # again while it finds work: a synced follow list makes its accounts due
        if not stack.run_cycle().get("leased"):
            break
    snapshots.changed()
    snapshots.save_if_changed()
    server.routes = http_routes(stack.stack)
    server.functions = stack.functions

    threads = [threading.Thread(target=server.serve_forever, name="api", daemon=True),
               threading.Thread(target=_every, args=(stop, rate, lambda: _tick(stack, snapshots)),
                                name="scheduler"),
               threading.Thread(target=snapshots.run, args=(stop,), name="snapshots"),
               *[threading.Thread(target=_poll_forever, args=(stop, q, snapshots),
                                  name=q.function.logical_id) for q in stack.queues]]
    for thread in threads:
        thread.start()
    log.info("serving %s/feed.xml (also /feed.atom, /feed.json, /feed and /); "
             "scheduler every %ds; Ctrl+C stops", public_url, rate)

    while not stop.wait(0.5):
        pass
    log.info("stopping: finishing in-flight work…")
    stop.set()
    server.shutdown()
    for thread in threads[1:]:
        thread.join()
    server.server_close()
    snapshots.changed()
    snapshots.save_if_changed()  # the clean-shutdown snapshot
    for origin in (demo, github_sim):
        if origin:
            origin.close()
    stack.close()
    log.info("stopped")
    return 0


def global_proxy_login() -> dict | None:
    """STARFEED_PROXY's user:password@, as the token store keeps it (`starfeed proxy set`): taken
    off the setting, so that no process's environment, log or file holds it. None when it has none,
    or cannot be used (each source then fails with the reason)."""
    try:
        return proxy_login_stored(parse_proxy(os.environ.get("STARFEED_PROXY", ""), "STARFEED_PROXY"))
    except OptionError:
        return None


def start_github_demo() -> GitHubSim | None:
    """Without a token of the user's, a simulated GitHub on loopback stands in, so the demo shows
    the GitHub stars feature too. Its accounts and stars are the same all day, across restarts."""
    if os.environ.get(TOKEN_ENV) or os.environ.get("STARFEED_GITHUB_API_URL") or not demo_wanted():
        return None
    day = time.time() // 86400 * 86400
    accounts = population(12, day - 3 * 86400, day + 2 * 86400, busier=20)
    port = int(os.environ.get("STARFEED_GITHUB_DEMO_PORT", "3002"))
    try:
        sim = GitHubSim(accounts, port=port)
    except OSError:
        log.warning("port %d is busy: no simulated GitHub for the demo (set STARFEED_GITHUB_DEMO_PORT)", port)
        return None
    os.environ.update({"STARFEED_GITHUB_API_URL": sim.url, TOKEN_ENV: sim.token})
    return sim


def demo_wanted() -> bool:
    """STARFEED_DEMO=0 starts with no demo feeds and no simulated GitHub: an empty starfeed."""
    return os.environ.get("STARFEED_DEMO", "1").strip() != "0"


def initial_sources() -> tuple[OpmlDocument | None, int]:
    """STARFEED_SOURCES: an OPML file (its folders become collections) or feed URLs separated by
    spaces or commas; STARFEED_BACKFILL=N: each of them, when new, keeps the newest N entries of
    its first fetch (`source add --backfill N`)."""
    value = os.environ.get("STARFEED_SOURCES", "").strip()
    backfill = os.environ.get("STARFEED_BACKFILL", "").strip() or "0"
    if not backfill.isdigit():
        raise BadSource(f"STARFEED_BACKFILL is a number of entries, 0 or more: {backfill!r}")
    if not value:
        return None, int(backfill)
    if "://" in value.split(",", 1)[0].split(None, 1)[0]:
        urls = [u for u in value.replace(",", " ").split() if u]
        return OpmlDocument([OpmlFeed(u) for u in urls]), int(backfill)
    try:
        return read_opml(Path(value)), int(backfill)
    except BadSource as exc:
        raise BadSource(f"STARFEED_SOURCES: {exc}") from None


def subscribe_initial_sources(storage: Storage, github_sim: GitHubSim | None = None,
                              initial: tuple[OpmlDocument | None, int] | None = None) -> DemoOrigin | None:
    now = time.time()
    demo_port = int(os.environ.get("STARFEED_DEMO_PORT", "3001"))
    document, backfill = initial if initial is not None else initial_sources()
    if document is not None:
        added, failed = 0, []
        logins = logins_off(document.feeds)  # user:password@ in a URL: kept in the token store, never logged
        for feed in document.feeds:
            try:
                # Due at once, no jitter: the start's poll cycle fetches them before it answers.
                added += add_listed(storage, feed, now, backfill=backfill, login=logins.get(feed.url))[1]
            except (BadSource, Refused) as exc:
                failed.append(str(exc))
        folders = "; ".join(f"folder {f!r} as collection {c}" for f, c in document.folders.items())
        log.info("STARFEED_SOURCES: %d new of %d sources%s%s", added, len(document.feeds),
                 f", each keeping the newest {backfill} entries of its first fetch" if backfill and added else "",
                 f" ({folders})" if folders else "")
        for reason in failed:
            log.warning("STARFEED_SOURCES: not subscribed: %s", reason)
    sources = storage.sources.all()
    if os.environ.get(TOKEN_ENV) and (github_sim is None or not sources):
        # A token (the user's, or the simulation's on a first demo run): follow its follow list.
        following = new_following(storage.settings, now)
        if storage.sources.add(following):
            log.info("GitHub: subscribed the follow list of the token's account at %s%s", following.url,
                     " (a simulated GitHub for the demo)" if github_sim else "")
    demo_url = f"http://127.0.0.1:{demo_port}/"
    if sources and not any(s.url.startswith(demo_url) for s in sources):
        return None
    if not sources and not demo_wanted():
        log.info("no sources yet, and no demo feeds (STARFEED_DEMO=0): add yours with `starfeed source add URL`")
        return None
    # The demo origin keeps its port, so restored demo subscriptions still resolve.
    try:
        demo = DemoOrigin(port=demo_port)
    except OSError:
        demo = DemoOrigin()
        log.warning("port %d is busy: the demo origin listens on %s instead (set "
                    "STARFEED_DEMO_PORT to keep one)", demo_port, demo.url)
    if not sources:
        for url in demo.feed_urls:
            source = add_source(storage, url, demo.since)[0]
            if url in demo.deframed_urls:
                storage.sources.change(source.source_id, {"deframe": True})
        log.info("no sources yet: subscribed the demo origin's %d feeds at %s (add yours with "
                 "`starfeed source add URL`); %s is deframed by the %s analyzer", len(demo.feed_urls), demo.url,
                 ", ".join(demo.deframed_urls), storage.settings.analyzer)
    return demo


class _Snapshots(Snapshotter):
    """The state file, and with it the local token store's own file (local/token_store.py)."""

    def __init__(self, stack, path: Path, interval: float, tokens: TokenStoreFile):
        super().__init__(stack, path, interval)
        self.tokens = tokens

    def save_if_changed(self) -> bool:
        saved = super().save_if_changed()
        return self.tokens.save_if_changed() or saved


def _tick(stack: LocalStack, snapshots: Snapshotter) -> None:
    if stack.tick().get("leased"):
        snapshots.changed()


def _every(stop: threading.Event, seconds: float, action) -> None:
    while not stop.wait(seconds):
        try:
            action()
        except Exception:
            log.exception("scheduler run failed; trying again next tick")


def _poll_forever(stop: threading.Event, queue: QueueSource, snapshots: Snapshotter) -> None:
    busy = False
    while not stop.is_set():
        try:
            handled = queue.poll(wait_seconds=1)
        except Exception:
            log.exception("polling %s failed", queue.queue_url)
            stop.wait(1)
            continue
        if handled:
            snapshots.changed()
        elif busy:
            snapshots.request()  # the work this queue had is done: keep it
        busy = bool(handled)
