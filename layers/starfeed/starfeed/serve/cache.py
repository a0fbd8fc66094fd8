"""The feed cache inside the api function (docs/design.md#api-cache): LRU, TTL, bounded in bytes, with counters.

The TTL is a revalidation window (settings.api_cache_ttl, a few seconds), not an expiry: within
it a hit is answered from memory without touching S3; after it the next request for the object
revalidates it with a conditional GET (If-None-Match), so a changed object replaces the cached
one (an invalidation) and an unchanged one costs a 304 and no body. A window is timed from the
start of the GET that last checked the object, so a render that completed before that GET is
served by it, and one that completed after it is served by every instance from its next request
a window later: a new render reaches every warm instance within the window plus one GET.

Cost: at most one GET per cached object per window per instance, and never more than one per
request; an object that is absent, or larger than max_bytes, is not cached and costs a GET per
request (see settings.api_cache_ttl for the figures).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from starfeed.settings import Settings
from starfeed.store.blobs import FeedObject, NotModified


@dataclass
class _Cached:
    obj: FeedObject
    checked_at: float


@dataclass
class FeedCache:
    max_bytes: int = 32 * 1024 * 1024
    ttl: float = Settings.api_cache_ttl  # the revalidation window, in seconds
    clock: Callable[[], float] = time.monotonic
    _items: OrderedDict = field(default_factory=OrderedDict)
    _bytes: int = 0
    stats: dict = field(default_factory=lambda: {"hits": 0, "misses": 0, "evictions": 0,
                                                 "invalidations": 0, "revalidations": 0})

    def get(self, key: str, load: Callable[[str | None], FeedObject | None]) -> tuple[FeedObject | None, bool]:
        """(object, hit). load(etag) fetches the object, raising NotModified when it still has
        that ETag, or returns None when it is gone."""
        cached = self._items.get(key)
        asked_at = self.clock()
        if cached is not None and asked_at - cached.checked_at < self.ttl:
            self._items.move_to_end(key)
            self.stats["hits"] += 1
            return cached.obj, True
        try:
            obj = load(cached.obj.etag if cached else None)
        except NotModified:  # unchanged: a 304 from S3 renews the window, no body is read
            cached.checked_at = asked_at
            self._items.move_to_end(key)
            self.stats["hits"] += 1
            self.stats["revalidations"] += 1
            return cached.obj, True
        self.stats["misses"] += 1
        if cached is not None:
            self._drop(key)
            self.stats["invalidations"] += 1
        if obj is not None and len(obj.body) <= self.max_bytes:
            self._items[key] = _Cached(obj, asked_at)
            self._bytes += len(obj.body)
            while self._bytes > self.max_bytes:
                self._drop(next(iter(self._items)))
                self.stats["evictions"] += 1
        return obj, False

    def _drop(self, key: str) -> None:
        self._bytes -= len(self._items.pop(key).obj.body)

    def summary(self) -> dict:
        total = self.stats["hits"] + self.stats["misses"]
        return {**self.stats, "entries": len(self._items), "bytes": self._bytes,
                "hit_rate": self.stats["hits"] / total if total else 0.0}
