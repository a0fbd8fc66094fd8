"""A page without a feed read by CSS selectors: each item its selectors find is an entry, with
its title, link and, if asked for, date and summary (`source add URL --items SEL --title SEL
--link SEL`; parse/selected.py). Crawled as a website page is, and served by starfeed's own feed.

A selector runs as an XPath in libxml2, which Python cannot interrupt, and some cost the square of
a page's elements (`* ~ *` on a list of thousands: minutes). So the page is read in a child
process, stopped after settings.selector_seconds (docs/design.md#selector-bounds)."""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from starfeed.kinds.website import Website
from starfeed.model import Source
from starfeed.settings import Settings

if TYPE_CHECKING:
    from starfeed.parse.ingest import Ingested

Result = TypeVar("Result")


class SelectedPage(Website):
    name = "selectors"
    reader = "read_selected"

    def read(self, body: bytes, url: str, content_type: str | None, source: Source, now: float,
             settings: Settings, history: bool = False) -> Ingested:
        """As its reader reads it, in a child process stopped after settings.selector_seconds."""
        from starfeed.parse.ingest import Ingested, read_selected  # imported here, not in the child

        def reading() -> Ingested:
            return read_selected(body, url, content_type, source, now, settings, history)

        try:
            return within(settings.selector_seconds, reading)
        except TimeoutError:
            return Ingested(format="selectors", error=(
                f"the selectors took longer than {settings.selector_seconds:g} s to read the page "
                "(STARFEED_SELECTOR_SECONDS): simpler selectors (fewer parts, no '~' or :nth-child on a long "
                "list) read it faster"))


def within(seconds: float, work: Callable[[], Result]) -> Result:
    """work()'s result, computed in a child process (fork) stopped after `seconds`: TimeoutError
    when it took longer, ChildProcessError when the child failed. Where there is no fork
    (Windows), work() runs here, unbounded."""
    if not hasattr(os, "fork"):
        return work()
    readable, writable = os.pipe()
    child = os.fork()
    if child == 0:  # the child: the result, pickled down the pipe, and out without cleanup
        status = 1
        try:
            os.close(readable)
            with os.fdopen(writable, "wb") as pipe:
                pipe.write(pickle.dumps(work()))
            status = 0
        finally:
            os._exit(status)
    os.close(writable)
    deadline, chunks = time.monotonic() + seconds, list[bytes]()
    try:
        while (left := deadline - time.monotonic()) > 0 and select.select([readable], [], [], left)[0]:
            chunk = os.read(readable, 1 << 16)
            if not chunk:  # the child is done
                _, status = os.waitpid(child, 0)
                if status != 0:
                    raise ChildProcessError(f"the child process reading it failed (status {status})")
                result: Result = pickle.loads(b"".join(chunks))  # our own child's: trusted as our own objects are
                return result
            chunks.append(chunk)
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        raise TimeoutError(f"not done in {seconds:g} s")
    finally:
        os.close(readable)


KIND = SelectedPage()
