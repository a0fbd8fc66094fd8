"""`make run`'s program as a user meets it, each start a real process: the demo feeds within
30 s, a clean Ctrl+C, and its state kept across restarts."""

import base64
import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import feedparser
import requests

from starfeed.local.snapshot import SNAPSHOT_FILE
from starfeed.local.token_store import TOKEN_STORE_FILE

from conftest import ROOT
from origin import Origin, Reply, rss
from proxies import EGRESS, HttpProxy
from waiting import eventually


def free_ports(count: int) -> list[int]:
    """Distinct free ports: all sockets stay bound until every port is known."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class LocalRun:
    """`starfeed local run` in its own process, with its own ports and state folder."""

    def __init__(self, state: Path, **settings: str):
        self.state = state
        self.port, demo_port, no_github = free_ports(3)
        self.env = {**{k: v for k, v in os.environ.items()
                       if not k.startswith(("AWS_", "SOURCES_", "ENTRIES_", "FEEDS_", "RAW_",
                                            "FETCH_", "RENDER_", "STARFEED_"))},
                    "STARFEED_STATE_DIR": str(state), "STARFEED_PORT": str(self.port),
                    "STARFEED_DEMO_PORT": str(demo_port),
                    "STARFEED_SCHEDULE_RATE": "rate(1 second)",
                    # No demo feeds: their first fetches, renders and analyses were most of a start.
                    "STARFEED_DEMO": "0",
                    # No simulated GitHub: its 12 accounts' first syncs are most of a first cycle
                    # (test_github.py covers them), and a GitHub API URL of its own keeps it off.
                    "STARFEED_GITHUB_API_URL": f"http://127.0.0.1:{no_github}", **settings}
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([sys.executable, "-m", "starfeed.cli", "local", "run"],
                                        cwd=ROOT, env=self.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        try:
            # The port is bound at once but answers only after the first poll cycle.
            self.wait_until(lambda: requests.get(self.base + "/healthz", timeout=5).status_code == 200)
        except BaseException:
            self.process.kill()
            self.process.communicate()
            raise

    def cli(self, *args: str) -> str:
        return subprocess.run([sys.executable, "-m", "starfeed.cli", *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, check=True).stdout

    def sources(self) -> dict:
        return {s["url"]: s for s in json.loads(self.cli("source", "list", "--json"))}

    def state_of(self, url: str) -> str | None:
        """The source's state through the REST API: a poll that starts no process of its own."""
        feeds = requests.get(self.base + "/api/v1/feeds", timeout=5).json()["feeds"]
        return next((f["state"] for f in feeds if f["url"] == url), None)

    def wait_until(self, condition, seconds: float = 30) -> None:
        def holds():
            if self.process.poll() is not None:
                raise AssertionError(self.process.stdout.read())  # it stopped: say why
            try:
                return condition()
            except (requests.ConnectionError, requests.Timeout):
                return False  # still starting

        eventually(holds, seconds, every=0.2)

    def stop(self, signum=signal.SIGINT) -> str:
        self.process.send_signal(signum)
        output, _ = self.process.communicate(timeout=30)
        return output


def test_a_first_run_serves_the_demo_feeds_stops_cleanly_and_reset_moves_its_state_aside(tmp_path):
    run = LocalRun(tmp_path, STARFEED_SCHEDULE_RATE="rate(1 minute)", STARFEED_DEMO="1")  # up, or fails within 30 s
    try:
        response = requests.get(run.base + "/feed.xml", timeout=5)
        assert response.headers["Content-Type"].startswith("application/rss+xml")
        assert len(feedparser.parse(response.content).entries) >= 10
        atom = requests.get(run.base + "/feed", headers={"Accept": "application/atom+xml"}, timeout=5)
        assert feedparser.parse(atom.content).version == "atom10" and atom.headers["Vary"] == "Accept, Accept-Encoding"
        assert (tmp_path / "stack.json").exists()  # how the CLI finds this stack
    finally:
        output = run.stop()
    assert run.process.returncode == 0, output
    assert "Traceback" not in output, output
    assert "subscribed the demo origin" in output and output.rstrip().endswith("stopped")
    assert not (tmp_path / "stack.json").exists()
    out = subprocess.run([sys.executable, "-m", "starfeed.cli", "local", "reset"], cwd=ROOT,
                         env=run.env, capture_output=True, text=True, check=True).stdout
    assert "moved the saved state to" in out and not (tmp_path / SNAPSHOT_FILE).exists()
    assert any(p.name.startswith(SNAPSHOT_FILE + ".reset-") for p in tmp_path.iterdir())


def test_sources_schedule_and_entries_survive_a_restart_without_their_origin(tmp_path):
    origin = Origin()
    # Published after the CLI subscribes: a new source keeps nothing older (docs/design.md#first-fetch).
    url = origin.serve("/kept.xml", Reply(200, rss(("k1", "Kept one"), ("k2", "Kept two"),
                                                   title="Kept", newest=time.time() + 120)))
    first = LocalRun(tmp_path)
    added = first.cli("source", "add", url).split()[1]
    first.wait_until(lambda: first.state_of(url) == "ok")
    before = first.sources()[url]
    output = first.stop()
    assert first.process.returncode == 0 and "Traceback" not in output
    assert "saved" in output and (tmp_path / SNAPSHOT_FILE).exists()
    origin.close()  # the feed's origin is gone
    requests_before = len(origin.requests)

    second = LocalRun(tmp_path)
    try:
        after = second.sources()[url]
        for field in ("source_id", "status", "etag", "interval", "next_check_at", "entry_count",
                      "last_fetch_at"):
            assert after[field] == before[field], field
        feed = requests.get(f"{second.base}/s/{added}/feed.xml", timeout=5)
        assert feed.status_code == 200 and "Kept one" in feed.text and "Kept two" in feed.text
        assert "Kept one" in requests.get(second.base + "/feed.xml", timeout=5).text
        assert len(origin.requests) == requests_before  # served before any new fetch
    finally:
        output = second.stop()
    assert "restored" in output and second.process.returncode == 0


def test_a_hard_kill_loses_at_most_one_interval(tmp_path):
    origin = Origin()
    url = origin.serve("/killed.xml", Reply(200, rss(("z", "Survivor"))))
    first = LocalRun(tmp_path, STARFEED_SNAPSHOT_INTERVAL="1")
    first.cli("source", "add", url)
    first.wait_until(lambda: first.state_of(url) == "ok")
    first.wait_until(lambda: _saved_status(tmp_path / SNAPSHOT_FILE, url) == "ok")  # the next snapshot
    first.stop(signal.SIGKILL)
    second = LocalRun(tmp_path)
    try:
        assert second.state_of(url) == "ok"
    finally:
        second.stop()
        origin.close()


def test_a_corrupt_snapshot_is_moved_aside_with_one_clear_line(tmp_path):
    # Every kind of unusable file gives this line (test_snapshot.py): here, as the start prints it.
    content = b"\x1f\x8b\x08\x00garbage"
    (tmp_path / SNAPSHOT_FILE).write_bytes(content)
    run = LocalRun(tmp_path)
    output = run.stop()
    lines = [line for line in output.splitlines() if "could not be used" in line]
    assert len(lines) == 1 and "started empty" in lines[0]
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(SNAPSHOT_FILE + ".unreadable-")]
    assert len(aside) == 1 and str(aside[0]) in lines[0]
    assert aside[0].read_bytes() == content
    assert "no saved state" not in output  # one line, not two
    assert "no demo feeds (STARFEED_DEMO=0)" in output and "subscribed the demo" not in output


def test_the_state_folder_holds_nothing_secret(tmp_path):
    run = LocalRun(tmp_path, STARFEED_GITHUB_TOKEN="ghp_notreallyasecret0000000000000000000")
    try:
        stack_file = (tmp_path / "stack.json").read_text()
    finally:
        run.stop()
    assert "ghp_" not in stack_file
    snapshot = gzip.decompress((tmp_path / SNAPSHOT_FILE).read_bytes())
    assert b"ghp_" not in snapshot and b"STARFEED_GITHUB_TOKEN" not in snapshot
    for path in tmp_path.iterdir():
        assert path.stat().st_mode & 0o077 == 0, path  # 0600: readable by its owner only


def test_secrets_survive_a_restart_in_a_file_of_their_own_and_the_proxys_login_leaves_its_setting(tmp_path):
    """A feed readable with a Basic login only, through STARFEED_PROXY with a login of its own: both
    logins kept in the local token store, saved apart from the state file, and used again after a
    restart whose STARFEED_PROXY holds no login."""
    password, proxy_password = f"pw-{os.urandom(8).hex()}", f"proxy-{os.urandom(8).hex()}"
    origin, proxy = Origin(), HttpProxy(("ada", proxy_password))
    basic = "Basic " + base64.b64encode(f"ada:{password}".encode()).decode()
    url = origin.serve("/private.xml", Reply(200, rss(("p1", "Private"), newest=time.time() + 120)),
                       requires={"authorization": basic}, client=EGRESS)
    first = LocalRun(tmp_path, STARFEED_PROXY=proxy.url(("ada", proxy_password)))
    try:
        added = first.cli("source", "add", url.replace("://", f"://ada:{password}@", 1))
        first.wait_until(lambda: first.state_of(url) == "ok")
        source_id = added.split()[1]
        stack_file = (tmp_path / "stack.json").read_text()  # how the CLI finds the stack: deleted at its stop
    finally:
        output = first.stop() + added
        proxy_refusals = proxy.refused
    assert proxy_refusals == 0 and first.process.returncode == 0, output
    snapshot = gzip.decompress((tmp_path / SNAPSHOT_FILE).read_bytes()).decode()
    for secret in (password, proxy_password, basic.split()[1]):
        assert secret not in output + snapshot + stack_file
    assert (tmp_path / TOKEN_STORE_FILE).stat().st_mode & 0o077 == 0
    hits = len(origin.hits("/private.xml"))

    second = LocalRun(tmp_path, STARFEED_PROXY=proxy.url())
    try:
        second.cli("source", "sync", source_id)
        # Its document unchanged: "no change", which a request without either login could not get.
        second.wait_until(lambda: len(origin.hits("/private.xml")) > hits and second.state_of(url) == "not-modified")
    finally:
        output = second.stop()
        origin.close()
        proxy.close()
    assert "restored 2 entries of the local token store" in output and proxy.refused == 0, output


def test_ctrl_c_while_starting_still_stops_cleanly(tmp_path):
    """A Ctrl+C before the stack answers must not leave its worker threads running."""
    api_port, demo_port, no_github = free_ports(3)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "STARFEED_"))},
           "STARFEED_STATE_DIR": str(tmp_path), "STARFEED_PORT": str(api_port), "STARFEED_DEMO": "0",
           "STARFEED_DEMO_PORT": str(demo_port), "STARFEED_GITHUB_API_URL": f"http://127.0.0.1:{no_github}"}
    process = subprocess.Popen([sys.executable, "-m", "starfeed.cli", "local", "run"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # The port is bound as soon as it starts, and answers only after the first poll cycle: a
    # Ctrl+C once it is bound lands while it is starting.
    eventually(lambda: _bound(api_port), what="the api port bound")
    process.send_signal(signal.SIGINT)
    try:
        output, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.returncode == 0 and "Traceback" not in output, output


def test_starfeed_sources_subscribes_an_opml_with_its_folders_and_backfill(tmp_path):
    origin = Origin()
    old = rss(*[(f"s{n}", f"Older {n}") for n in range(5)], title="Old news", newest=time.time() - 20 * 86400)
    url = origin.serve("/old.xml", Reply(200, old))
    opml = tmp_path / "start.opml"
    opml.write_text(f'<opml version="2.0"><body><outline text="Reading List">'
                    f'<outline text="old" type="rss" xmlUrl="{url}"/></outline></body></opml>')
    run = LocalRun(tmp_path, STARFEED_SOURCES=str(opml), STARFEED_BACKFILL="2")
    try:
        source = run.sources()[url]
        assert source["collections"] == ["reading-list"] and source["backfill"] == 2
        assert source["entry_count"] == 2  # the start's poll cycle fetched it: its newest two
        feed = feedparser.parse(requests.get(f"{run.base}/c/reading-list/feed.xml", timeout=5).content)
        assert [e.title for e in feed.entries] == ["Older 0", "Older 1"]
    finally:
        output = run.stop()
        origin.close()
    assert "STARFEED_SOURCES: 1 new of 1 sources, each keeping the newest 2 entries" in output
    assert "folder 'Reading List' as collection reading-list" in output


def test_a_missing_starfeed_sources_file_stops_the_start_in_one_line(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "STARFEED_", "SOURCES_"))},
           "STARFEED_STATE_DIR": str(tmp_path), "STARFEED_SOURCES": str(tmp_path / "nothere.opml")}
    done = subprocess.run([sys.executable, "-m", "starfeed.cli", "local", "run"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    output = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in output
    assert f"STARFEED_SOURCES: {tmp_path / 'nothere.opml'}: no such file" in output


def _bound(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _saved_status(snapshot: Path, url: str) -> str | None:
    """The status the snapshot on disk holds for the source of this URL."""
    try:
        state = json.loads(gzip.decompress(snapshot.read_bytes()))
    except (OSError, EOFError, ValueError):
        return None  # not written yet, or being replaced
    sources = state["tables"]["SourcesTable"]
    return next((item["status"]["S"] for item in sources if item.get("url", {}).get("S") == url), None)
