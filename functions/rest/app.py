"""REST API: feeds, entries and raw payloads for programs, behind IAM authorization (/api/v1)."""

import os

from starfeed import observe
from starfeed.serve.rest.app import RestApi
from starfeed.settings import Settings
from starfeed.store import Storage

observe.configure()
storage = Storage(Settings.from_env())
api = RestApi(storage, os.environ.get("STARFEED_PUBLIC_URL"))  # locally set; on AWS, the request's


@observe.handler
def handler(event, context):
    return api.resolve(event, context)
