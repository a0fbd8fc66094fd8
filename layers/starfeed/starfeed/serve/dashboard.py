"""The statistics dashboard (docs/design.md#dashboard): inline SVG charts, no JavaScript, nothing secret and no
reader addresses. Pure: it renders what it is given. The sources come from the renderer's
summary (render/summary.py), already redacted, never from a Scan per request."""

from __future__ import annotations

import time
from collections import Counter
from html import escape

from starfeed.formats import FORMATS
from starfeed.model import Status
from starfeed.render.summary import SourceRow
from starfeed.stats import percentile_ms

# What the request counters count: the feed formats, and the pages and OPML lists.
FORMAT_NAMES = {**{f.name: f.title for f in FORMATS}, "html": "HTML", "opml": "OPML"}

_STYLE = """
:root{color-scheme:light dark;--fg:#1d1d1f;--muted:#6e6e73;--line:#d2d2d7;--bar:#0a66c2;--bad:#c0392b}
@media(prefers-color-scheme:dark){:root{--fg:#f5f5f7;--muted:#a1a1a6;--line:#3a3a3c;--bar:#5aa9ff}}
body{margin:0;font:15px/1.45 system-ui,sans-serif;color:var(--fg)}main{max-width:60rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:1.6rem}.cards{display:flex;flex-wrap:wrap;gap:.75rem}
.card{border:1px solid var(--line);border-radius:.5rem;padding:.6rem .9rem;min-width:9rem}
.card b{display:block;font-size:1.4rem}table{border-collapse:collapse;width:100%;font-size:.9rem}
td,th{text-align:left;padding:.25rem .4rem;border-bottom:1px solid var(--line);vertical-align:top}
.muted{color:var(--muted)}.bad{color:var(--bad)}svg text{fill:var(--fg);font-size:12px}
svg rect{fill:var(--bar)}svg{max-width:40rem}.wrap{overflow-x:auto}
"""


def bar_chart(rows: list[tuple[str, float]], unit: str = "", width: int = 520) -> str:
    """Horizontal bars as inline SVG."""
    if not rows:
        return '<p class="muted">Nothing yet.</p>'
    top = max(value for _, value in rows) or 1
    height = 22 * len(rows) + 4
    bars = []
    for i, (label, value) in enumerate(rows):
        y = 22 * i + 2
        length = max(1, int((width - 230) * value / top))
        bars.append(f'<text x="0" y="{y + 14}">{escape(label)}</text>'
                    f'<rect x="150" y="{y + 2}" width="{length}" height="16" rx="2"></rect>'
                    f'<text x="{156 + length}" y="{y + 14}">{value:g}{unit}</text>')
    return (f'<svg role="img" viewBox="0 0 {width} {height}" width="100%" '
            f'preserveAspectRatio="xMinYMin meet">{"".join(bars)}</svg>')


def render_dashboard(days: dict[str, dict[str, int]], cache: dict, sources: list[SourceRow],
                     now: float, notice: str | None = None, sources_at: float | None = None,
                     budget: tuple[int, int] = (0, 0), rule_sets: tuple[str, ...] = ()) -> bytes:
    """sources and sources_at: load_sources_summary()'s rows and built_at ([] and None before
    the renderer first wrote the summary); budget: the analyzer's daily calls and tokens;
    rule_sets: the rule sets, each a feed (docs/design.md#rule-sets)."""
    totals: Counter = Counter()
    for counters in days.values():
        totals.update(counters)
    by_format = [(FORMAT_NAMES.get(k.split(":", 1)[1], k), v) for k, v in totals.most_common()
                 if k.startswith("req:")]
    readers = [(k.split(":", 1)[1], v) for k, v in totals.most_common() if k.startswith("ua:")][:10]
    requests = sum(v for _, v in by_format)
    hits, misses = totals["cache:hit"], totals["cache:miss"]
    per_day = [(day[5:], sum(v for k, v in c.items() if k.startswith("req:"))) for day, c in days.items()]
    render_rows = []
    for fmt in FORMATS:
        histogram = {int(k.rsplit(":", 1)[1]): v for k, v in totals.items() if k.startswith(f"render:{fmt.name}:")}
        cells = [percentile_ms(histogram, f) for f in (0.5, 0.95, 0.99)]
        render_rows.append(f"<tr><td>{fmt.title}</td><td>{sum(histogram.values())}</td>"
                           + "".join(f"<td>{'–' if c is None else f'≤ {c:g} ms'}</td>" for c in cells) + "</tr>")
    errors = sorted((s for s in sources if s.last_error), key=lambda s: s.last_fetch_at or 0, reverse=True)[:10]
    unhealthy_first = sorted(sources, key=lambda s: (-s.consecutive_failures, s.status == Status.OK, s.title))
    as_of = (f"sources as of {_utc(sources_at)}" if sources_at
             else "sources not summarized yet")
    hit_rate = f"{100 * hits / (hits + misses):.1f}%" if hits + misses else "–"
    today = days[max(days)] if days else {}
    analyzer = (f"{today.get('analyzer_calls', 0):,} of {budget[0]:,} calls"
                f"<span class=\"muted\">{today.get('analyzer_tokens', 0):,} of {budget[1]:,} tokens</span>")
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>starfeed statistics</title>
<style>{_STYLE}</style></head><body><main>
<h1>starfeed statistics</h1><p class="muted">Last {len(days)} days · built {_utc(now)} · <a href="/">feeds</a></p>
{f'<p class="bad" role="alert">{escape(notice)}</p>' if notice else ""}
<div class="cards"><div class="card">Requests<b>{requests}</b></div>
<div class="card">Cache hit rate<b>{hit_rate}</b></div>
<div class="card">Sources<b>{len(sources)}</b></div>
<div class="card">Failing sources<b>{sum(1 for s in sources if s.status in (Status.ERROR, Status.GONE))}</b></div>
<div class="card">Analyzer today<b>{analyzer}</b></div>
<div class="card">This instance's cache<b>{cache.get('entries', 0)} objects</b>\
<span class="muted">{cache.get('hits', 0)} hits · {cache.get('misses', 0)} misses · \
{cache.get('evictions', 0)} evictions</span></div></div>
<h2>Requests by format</h2>{bar_chart(by_format)}
<h2>Requests per day</h2>{bar_chart(per_day)}
<h2>Top readers</h2>{bar_chart(readers)}
<h2>Render time</h2><div class="wrap"><table>\
<tr><th>Format</th><th>Renders</th><th>p50</th><th>p95</th><th>p99</th></tr>{''.join(render_rows)}</table></div>
<h2>Rule sets</h2>{_rule_sets(rule_sets)}
<h2>Recent errors</h2>{_errors(errors, now)}
<h2>Sources</h2><p class="muted">{escape(as_of)}</p><div class="wrap"><table><tr><th>Source</th><th>Status</th>\
<th>Interval</th><th>EWMA of new entries</th><th>Why</th><th>Failures</th><th>Next check</th></tr>
{''.join(_source_row(s, now) for s in unhealthy_first[:200])}</table></div>
</main></body></html>"""
    return html.encode()


def _rule_sets(names: tuple[str, ...]) -> str:
    if not names:
        return '<p class="muted">None: <code>starfeed rules add ... --name SET</code> starts one.</p>'
    rows = "".join(f'<tr><td><a href="/r/{escape(name)}/">{escape(name)}</a></td><td>'
                   + " ".join(f'<a href="/{escape(f.file(f"r/{name}/feed"))}">{escape(f.title)}</a>' for f in FORMATS)
                   + "</td></tr>" for name in names)
    return f'<div class="wrap"><table><tr><th>Set</th><th>Feed</th></tr>{rows}</table></div>'


def _errors(sources: list[SourceRow], now: float) -> str:
    if not sources:
        return '<p class="muted">None.</p>'
    rows = "".join(f"<tr><td>{_ago(s.last_fetch_at, now)}</td><td>{escape(s.title)}</td>"
                   f'<td class="bad">{escape(s.last_error or "")}</td></tr>' for s in sources)
    return f'<div class="wrap"><table><tr><th>When</th><th>Source</th><th>Error</th></tr>{rows}</table></div>'


def _source_row(source: SourceRow, now: float) -> str:
    status = escape(source.status if source.enabled else "disabled")
    css = ' class="bad"' if source.status in (Status.ERROR, Status.GONE) else ""
    ewma = source.ewma_interarrival
    return (f"<tr><td>{escape(source.title)}</td><td{css}>{status}"
            f"{f' ({source.http_status})' if source.http_status else ''}</td>"
            f"<td>{_span(source.interval)}</td><td>{_span(ewma) if ewma else '–'}</td>"
            f"<td>{escape(source.reason or '–')}</td><td>{source.consecutive_failures}</td>"
            f"<td>{'–' if not source.next_check_at else _span(max(0, source.next_check_at - now))}</td></tr>")


def _span(seconds: float | None) -> str:
    if not seconds:
        return "–"
    seconds = int(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}".replace(".0 ", " ")
    return f"{seconds} s"


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def _ago(epoch: float | None, now: float) -> str:
    return "–" if not epoch else _span(now - epoch) + " ago"
