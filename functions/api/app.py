"""API: serves the rendered feeds behind API Gateway (HTTP API, payload v2)."""

import warnings

from aws_lambda_powertools import Metrics

from starfeed.serve.api import build_app
from starfeed.settings import Settings
from starfeed.store import Storage

# /healthz, OPML and 404s add no metric, and locally metrics are off: an empty flush is normal.
warnings.filterwarnings("ignore", message="No application metrics to publish")

metrics = Metrics()
storage = Storage(Settings.from_env())
app = build_app(storage, metrics)


@metrics.log_metrics
def handler(event, context):
    return app.resolve(event, context)
