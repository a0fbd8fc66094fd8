"""WebSub callback: hubs verify our subscriptions and push their feeds here (/websub/...)."""

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from starfeed import observe
from starfeed.settings import Settings
from starfeed.store import Storage
from starfeed.websub.callback import router

observe.configure()
storage = Storage(Settings.from_env())
app = APIGatewayHttpResolver()
app.include_router(router(storage))


@observe.handler
def handler(event, context):
    return app.resolve(event, context)
