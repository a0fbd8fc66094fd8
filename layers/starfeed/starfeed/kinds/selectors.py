"""A page without a feed read by CSS selectors: each item its selectors find is an entry, with
its title, link and, if asked for, date and summary (`source add URL --items SEL --title SEL
--link SEL`; parse/selected.py). Crawled as a website page is, and served by starfeed's own feed."""

from __future__ import annotations

from starfeed.kinds.website import Website


class SelectedPage(Website):
    name = "selectors"
    reader = "read_selected"


KIND = SelectedPage()
