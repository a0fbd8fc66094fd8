"""Each integration test starts from a stack of its own: template.yaml's resources, empty, and
every function on a cold start. The stack is booted once per pytest process (creating its
resources takes a second); emptying it in moto's own memory takes milliseconds. So what one test
wrote, left due or cached never reaches the next, and the tests pass in any order."""

from __future__ import annotations

import os

from moto.backends import get_backend

from starfeed.local.runtime import load_functions, queue_sources
from starfeed.local.stack import LocalStack

# Services the template creates nothing in: a test's writes there (a GitHub token in SSM) go whole.
_NOTHING_FROM_THE_TEMPLATE = ("ssm", "secretsmanager")


def _regional_backends(service: str):
    for account in get_backend(service).values():
        yield from account.values()


def empty(stack: LocalStack) -> None:
    """Every table's items, every queue's messages and every bucket's objects gone, the injected
    faults cleared, and the functions started anew (their module-level state: the api's cache,
    the handlers' Storage and its memos, a test's patches)."""
    stack.faults.clear()
    for backend in _regional_backends("dynamodb"):
        for table in backend.tables.values():
            table.items.clear()
    for backend in _regional_backends("sqs"):
        for queue in backend.queues.values():
            # Also forgets the FIFO queues' deduplication IDs: moto keeps them on the messages.
            with queue._messages_lock:
                queue._messages, queue._pending_messages = [], set()
                queue.deleted_messages.clear()
    for backend in _regional_backends("s3"):
        for bucket in backend.buckets.values():
            for key in bucket.keys.values():
                key.dispose()  # moto holds each object's bytes in a temporary file
            bucket.keys.clear()
            bucket.multiparts.clear()
    for service in _NOTHING_FROM_THE_TEMPLATE:
        for backend in _regional_backends(service):
            backend.reset()
    os.environ.update(stack.environment)  # what the functions read at import, as the boot set it
    # The same dict and list objects: the HTTP bridge and the queues' pollers hold them.
    stack.functions.update(load_functions(stack.stack, stack.root))
    stack.queues[:] = queue_sources(stack.stack, stack.functions, stack.sqs)
