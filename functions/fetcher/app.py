"""Fetcher: one SQS FIFO record per due source. A record that raises is reported as a batch item
failure (with the rest of its host's group) and comes back, then goes to the dead-letter queue."""

import json

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response

from starfeed.fetch.job import fetch_source
from starfeed.settings import Settings
from starfeed.store import Storage

storage = Storage(Settings.from_env())
processor = SqsFifoPartialProcessor(skip_group_on_error=True)


def fetch_record(record) -> None:
    message = json.loads(record.body)
    fetch_source(storage, message["source_id"], lease=message.get("lease"))


def handler(event, context):
    return process_partial_response(event=event, record_handler=fetch_record,
                                    processor=processor, context=context)
