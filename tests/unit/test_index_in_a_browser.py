"""The HTML index in headless Chromium, on a phone and on a desktop, with the sanitize corpus's
hostile entries on it. The screenshots are kept in tests/artifacts/ to look at."""

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from starfeed.model import Source
from starfeed.parse.ingest import ingest, read_feed
from starfeed.parse.normalize import normalize_entries
from starfeed.render.html import IndexPage, render_index
from starfeed.settings import Settings

from conftest import shared_corpus

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed "
                                "(apt-get install chromium); .ci/run installs it")]


def page_with_hostile_entries() -> bytes:
    now = time.time()
    raw = [{"id": f"post-{n}", "title": title, "link": f"https://example.org/{n}",
            "summary": summary, "published_parsed": time.gmtime(now - n * 3600)}
           for n, (title, summary) in enumerate([
               ("Welcome to starfeed", "Your feeds, negotiated, cached and served."),
               ("A rather long title that has to wrap on a phone without overflowing the screen at all",
                "Short summary."),
           ])]
    entries = normalize_entries(raw, "demo", "https://example.org/feed", now)
    source = Source(source_id="hostile", url="https://example.org/feed", created_at=0)
    for path in sorted(shared_corpus("feedparser-tests", "wellformed", "sanitize").iterdir())[:150]:
        entries += ingest(read_feed, path.read_bytes(), "https://example.org/feed", None, source, now,
                          Settings(max_article_age_days=10 ** 6)).entries
    return render_index(IndexPage("starfeed", "/feed", {"tech": 3, "news": 1}), entries,
                        {"demo": "Demo <b>source</b>", "hostile": "Sanitize corpus"},
                        "2026-11-21T12:00:00Z")


@pytest.mark.parametrize("device, size", [("phone", "390,844"), ("desktop", "1280,900")])
def test_the_index_renders_and_runs_nothing(device, size):
    ARTIFACTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        page = Path(profile) / "index.html"
        page.write_bytes(page_with_hostile_entries())
        shot = ARTIFACTS / f"index-{device}.png"
        run = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}/p", f"--window-size={size}",
                              f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=60)
        assert run.returncode == 0, run.stderr.decode()[-500:]
        dom = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}/q", "--dump-dom",
                              page.as_uri()], capture_output=True, timeout=60).stdout.decode()
    assert shot.stat().st_size > 10_000  # a real picture, not a blank page
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # What the browser built from the page: no script element, no handler, title untouched.
    assert "<script" not in dom.lower() and " onerror=" not in dom.lower()
    assert "<title>starfeed</title>" in dom and "Welcome to starfeed" in dom
