"""What the statistics dashboard counts (docs/design.md#dashboard), as pure functions: readers by normalized
User-Agent, an adaptive sampler for busy traffic, and render times as histograms."""

from __future__ import annotations

import bisect
import re
import time
from dataclasses import dataclass, field

# The usual feed readers' patterns first (docs/design.md#dashboard), then today's common readers;
# browsers last (their UAs are generic).
READERS = [(re.compile(pattern, re.I), name) for pattern, name in (
    (r"Feedly", "Feedly"), (r"Inoreader", "Inoreader"), (r"NewsBlur", "NewsBlur"),
    (r"Tiny Tiny RSS", "Tiny Tiny RSS"), (r"FreshRSS", "FreshRSS"), (r"NetNewsWire", "NetNewsWire"),
    (r"Feedbin", "Feedbin"), (r"Miniflux", "Miniflux"), (r"Reeder", "Reeder"),
    (r"The Old Reader", "The Old Reader"), (r"Nextcloud.?News|ownCloud News", "Nextcloud News"),
    (r"Newsboat|Newsbeuter", "Newsboat"), (r"Liferea", "Liferea"), (r"Akregator", "Akregator"),
    (r"Thunderbird", "Thunderbird"), (r"Vienna", "Vienna"), (r"ReadKit", "ReadKit"),
    (r"Feeder", "Feeder"), (r"Readwise", "Readwise"), (r"Fluent ?Reader", "Fluent Reader"),
    (r"QuiteRSS", "QuiteRSS"), (r"RSSOwl", "RSSOwl"), (r"Feedbro", "Feedbro"),
    (r"Bazqux", "BazQux"), (r"Flipboard", "Flipboard"), (r"starfeed", "starfeed"),
    (r"curl|Wget|python-requests|Go-http-client|okhttp", "HTTP library"),
    (r"bot|crawler|spider", "Bot/Crawler"),
    (r"Mozilla.*Firefox", "Firefox"), (r"Mozilla.*(Edg|Edge)/", "Edge"), (r"Mozilla.*Chrome", "Chrome"),
    (r"Mozilla.*Safari", "Safari"),
)]

RENDER_BUCKETS_MS = (0.5, 1, 2, 3, 5, 8, 13, 20, 30, 50, 80, 130, 200, 300, 500, 800, 1300, 2000, 5000)


def reader_of(user_agent: str | None) -> str:
    if not user_agent:
        return "Unknown"
    for pattern, name in READERS:
        if pattern.search(user_agent):
            return name
    return "Other"


def render_bucket(milliseconds: float) -> int:
    """The index of the histogram bucket a render time falls in (the last is 'more')."""
    return bisect.bisect_left(RENDER_BUCKETS_MS, milliseconds)


def percentile_ms(histogram: dict[int, int], fraction: float) -> float | None:
    """The upper bound of the bucket holding the given fraction of all counts."""
    total = sum(histogram.values())
    if not total:
        return None
    running = 0
    for bucket in sorted(histogram):
        running += histogram[bucket]
        if running >= fraction * total:
            return RENDER_BUCKETS_MS[bucket] if bucket < len(RENDER_BUCKETS_MS) else float("inf")
    return float("inf")


@dataclass
class Sampler:
    """Sampling when busy (docs/design.md#dashboard): below `rate` requests a second every request is
    counted; above it, one in `every` is, with weight `every`, so totals stay right."""

    rate: float = 20.0
    clock: callable = time.monotonic
    _window_start: float = 0.0
    _in_window: int = 0
    _skip: int = 0
    every: int = field(default=1)

    def weight(self) -> int:
        """How much this request counts for: 0 (skipped) or the sampling weight."""
        now = self.clock()
        if now - self._window_start >= 1.0:
            self.every = max(1, int(self._in_window / self.rate))
            self._window_start, self._in_window = now, 0
        self._in_window += 1
        self._skip = (self._skip + 1) % self.every
        return self.every if self._skip == 0 else 0
