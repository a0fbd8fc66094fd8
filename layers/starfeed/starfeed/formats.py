"""The feed formats starfeed publishes: extension and Content-Type. A leaf module, so the api
function can know them without importing the renderers (lxml) on its cold start."""

FORMATS = {
    # format: (file extension, Content-Type)
    "rss": ("xml", "application/rss+xml; charset=utf-8"),
    "atom": ("atom", "application/atom+xml; charset=utf-8"),
    "json": ("json", "application/feed+json; charset=utf-8"),
}
EXTENSIONS = {extension: fmt for fmt, (extension, _) in FORMATS.items()}
TITLES = {"rss": "RSS", "atom": "Atom", "json": "JSON Feed"}
