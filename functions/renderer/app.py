"""Renderer: each record names feeds whose entries changed; a batch renders each feed once."""

import json

from aws_lambda_powertools.utilities.batch import (BatchProcessor, EventType,
                                                   process_partial_response)

from starfeed.render.job import render_targets
from starfeed.settings import Settings
from starfeed.store import Storage

storage = Storage(Settings.from_env())
processor = BatchProcessor(event_type=EventType.SQS)


def handler(event, context):
    targets: set[str] = set()

    def collect(record) -> None:
        targets.update(json.loads(record.body)["targets"])

    response = process_partial_response(event=event, record_handler=collect, processor=processor,
                                        context=context)
    # A failure here fails the whole invocation, so the batch is retried, never lost.
    render_targets(storage, sorted(targets))
    return response
