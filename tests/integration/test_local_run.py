"""`make run`'s program as a user meets it: a demo feed within 30 s, a clean Ctrl+C."""

import os
import signal
import socket
import subprocess
import sys
import time

import feedparser
import requests
from conftest import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_local_run_serves_the_demo_feeds_and_stops_cleanly(tmp_path):
    port = free_port()
    env = {**{k: v for k, v in os.environ.items()
              if not k.startswith(("AWS_", "SOURCES_", "ENTRIES_", "FEEDS_", "RAW_", "FETCH_",
                                   "RENDER_", "STARFEED_"))},
           "STARFEED_PORT": str(port), "STARFEED_STATE_DIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-m", "starfeed.cli", "local", "run"], cwd=ROOT,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        feed = None
        while time.monotonic() < deadline:
            try:
                response = requests.get(base + "/feed.xml", timeout=2)
                if response.status_code == 200:
                    feed = feedparser.parse(response.content)
                    if feed.entries:
                        break
            except requests.ConnectionError:
                pass
            time.sleep(0.3)
        assert feed is not None and len(feed.entries) >= 10
        assert response.headers["Content-Type"].startswith("application/rss+xml")
        assert requests.get(base + "/healthz", timeout=2).status_code == 200
        atom = requests.get(base + "/feed", headers={"Accept": "application/atom+xml"}, timeout=2)
        assert feedparser.parse(atom.content).version == "atom10" and atom.headers["Vary"] == "Accept"
        assert (tmp_path / "stack.json").exists()  # how the CLI finds this stack
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "Traceback" not in output
    assert "subscribed the demo origin" in output and output.rstrip().endswith("stopped")
    assert not (tmp_path / "stack.json").exists()
