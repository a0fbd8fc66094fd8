"""API: serves the rendered feeds behind API Gateway (HTTP API, payload v2)."""

from starfeed.serve.api import build_app
from starfeed.settings import Settings
from starfeed.store import Storage

app = build_app(Storage(Settings.from_env()))


def handler(event, context):
    return app.resolve(event, context)
