import pytest

from starfeed.stats import Sampler, percentile_ms, reader_of, render_bucket


@pytest.mark.parametrize("agent, reader", [
    ("Feedly/1.0 (+http://www.feedly.com/fetcher.html; 3 subscribers)", "Feedly"),
    ("Mozilla/5.0 (compatible; Inoreader/1.0; 5 subscribers)", "Inoreader"),
    ("NetNewsWire (RSS Reader; https://netnewswire.com/)", "NetNewsWire"),
    ("Mozilla/5.0 (compatible; Miniflux/2.2.3; +https://miniflux.app)", "Miniflux"),
    ("Tiny Tiny RSS/22.08 (https://tt-rss.org/)", "Tiny Tiny RSS"),
    ("FreshRSS/1.24.0 (Linux; https://freshrss.org)", "FreshRSS"),
    ("newsboat/2.36.0 (Linux x86_64)", "Newsboat"),
    ("Googlebot/2.1 (+http://www.google.com/bot.html)", "Bot/Crawler"),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox"),
    ("Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", "Safari"),
    ("curl/8.5.0", "HTTP library"), ("", "Unknown"), (None, "Unknown"), ("SomethingNew/1", "Other"),
])
def test_readers_are_normalized(agent, reader):
    assert reader_of(agent) == reader


def test_sampling_counts_every_request_when_quiet_and_keeps_totals_when_busy():
    now = [0.0]
    sampler = Sampler(rate=10, clock=lambda: now[0])
    assert sum(sampler.weight() for _ in range(5)) == 5
    now[0] = 1.0
    weights = [sampler.weight() for _ in range(100)]  # sets the rate from the quiet second
    now[0] = 2.0
    weights = [sampler.weight() for _ in range(100)]  # busy: 1 in 10, weight 10
    assert sum(1 for w in weights if w) <= 11 and 90 <= sum(weights) <= 110


def test_percentiles_from_render_histograms():
    histogram = {render_bucket(1.5): 50, render_bucket(4): 45, render_bucket(70): 5}
    assert percentile_ms(histogram, 0.5) == 2
    assert percentile_ms(histogram, 0.95) == 5
    assert percentile_ms(histogram, 0.99) == 80
    assert percentile_ms({}, 0.5) is None


def test_the_dashboard_shows_the_summary_rows_redacted_and_as_of_when():
    from starfeed.model import Source
    from starfeed.render.summary import dumps, loads, row_of
    from starfeed.serve.dashboard import render_dashboard

    sources = [Source(source_id="a1", url="https://u:pw@example.org/f?token=s3cret", status="error",
                      consecutive_failures=3, last_fetch_at=100.0,
                      last_error="HTTP 500 from https://example.org/f?token=s3cret&x=1\x00"),
               Source(source_id="b2", url="https://example.org/ok.xml", title="Fine <b>", enabled=False)]
    rows, built_at = loads(dumps([row_of(s, s.enabled and s.status != "new") for s in sources], 1_795_262_400.0))
    assert built_at == 1_795_262_400.0 and [r.source_id for r in rows] == ["a1", "b2"]
    assert rows[0].title == rows[0].url == "https://example.org/f?token=REDACTED"
    assert rows[0].last_error == "HTTP 500 from https://example.org/f?token=REDACTED&x=1"
    assert not rows[1].enabled and not rows[1].published
    page = render_dashboard({}, {}, rows, 1_795_266_000.0, sources_at=built_at).decode()
    assert "s3cret" not in page and "pw@" not in page and "Fine &lt;b&gt;" in page
    assert "sources as of 2026-11-21 12:00 UTC" in page and "disabled" in page
    assert "not summarized yet" in render_dashboard({}, {}, [], 0.0).decode()


def test_a_summary_from_a_newer_version_still_loads():
    import json

    from starfeed.render.summary import loads

    body = json.dumps({"built_at": 5, "sources": [{"source_id": "x", "title": "t", "url": "u", "status": "ok",
                                                   "enabled": True, "published": True, "later": 1}]})
    rows, built_at = loads(body.encode())
    assert rows[0].source_id == "x" and built_at == 5.0
