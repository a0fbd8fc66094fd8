"""History: walks a source's archive (RFC 5005), one document per message of its own queue."""

import json
import time

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from starfeed import observe
from starfeed.fetch.history import walk_step
from starfeed.settings import Settings
from starfeed.store import Storage

observe.configure()
storage = Storage(Settings.from_env())
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def walk_record(record) -> None:
    following = walk_step(storage, json.loads(record.body), time.time())
    if following is not None:
        storage.queues.send_history(following)


@observe.handler
def handler(event, context):
    return process_partial_response(event=event, record_handler=walk_record, processor=processor, context=context)
