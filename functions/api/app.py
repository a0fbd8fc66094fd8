"""API: serves the rendered feeds behind API Gateway (HTTP API, payload v2)."""

import os
from dataclasses import replace

from starfeed import observe
from starfeed.serve.api import build_app
from starfeed.settings import Settings
from starfeed.store import Storage

observe.configure()
storage = Storage(Settings.from_env())
app = build_app(storage)


@observe.handler
def handler(event, context):
    if not os.environ.get("STARFEED_PUBLIC_URL"):
        # On AWS the template cannot give this function its own API's URL (a circular dependency):
        # the links it builds (Link headers, older pages, max_score) name the domain it was called at.
        domain = (event.get("requestContext") or {}).get("domainName")
        if domain and storage.settings.public_url != f"https://{domain}":
            storage.settings = replace(storage.settings, public_url=f"https://{domain}")
    return app.resolve(event, context)
