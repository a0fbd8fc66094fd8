"""API: serves the rendered feeds behind API Gateway (HTTP API, payload v2)."""

from aws_lambda_powertools import Metrics

from starfeed.serve.api import build_app
from starfeed.settings import Settings
from starfeed.store import Storage

metrics = Metrics()
app = build_app(Storage(Settings.from_env()), metrics)


@metrics.log_metrics
def handler(event, context):
    return app.resolve(event, context)
