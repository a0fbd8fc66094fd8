"""Drive the functions of template.yaml as Lambda does: same handlers, same event shapes."""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import threading
import time
import uuid
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

from starfeed.local.template import REGION, Stack

log = logging.getLogger(__name__)
SQS_RECEIVE_MAX = 10
# The function whose handler is running, for tests that hold each function's IAM policy against
# the AWS calls its code makes.
CURRENT_FUNCTION: ContextVar[str | None] = ContextVar("current_function", default=None)


class LambdaContext:
    """The attributes of Lambda's context object that handlers and powertools read."""

    def __init__(self, function_name: str, timeout: int, memory: int):
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:{function_name}"
        self.memory_limit_in_mb = memory
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + timeout

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


@dataclass
class Function:
    """One function instance: like a Lambda execution environment, it runs one event at a time."""

    logical_id: str
    module: ModuleType
    timeout: int
    memory: int

    def __post_init__(self):
        self._busy = threading.Lock()

    def invoke(self, event: dict):
        with self._busy:
            running = CURRENT_FUNCTION.set(self.logical_id)
            try:
                return self.module.handler(event, LambdaContext(self.logical_id, self.timeout, self.memory))
            finally:
                CURRENT_FUNCTION.reset(running)


def load_functions(stack: Stack, root: Path) -> dict[str, Function]:
    """Import each function's handler module from its CodeUri, as Lambda would."""
    return {logical_id: load_function(stack, root, logical_id)
            for logical_id in stack.of_type("AWS::Serverless::Function")}


def load_function(stack: Stack, root: Path, logical_id: str) -> Function:
    """One execution environment of a function: its handler module imported afresh (a cold
    start), so its module-level state (the api's cache, clients) is its own."""
    defaults = stack.template.get("Globals", {}).get("Function", {})
    props = {**defaults, **stack.resources[logical_id]["Properties"]}
    module_name, _ = props["Handler"].rsplit(".", 1)
    path = root / props["CodeUri"] / f"{module_name}.py"
    spec = importlib.util.spec_from_file_location(f"starfeed_function_{logical_id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Function(logical_id, module, int(props.get("Timeout", 3)), int(props.get("MemorySize", 128)))


def rate_seconds(expression: str) -> float:
    """rate(5 minutes) -> 300. Seconds are accepted too: locally only, EventBridge has none."""
    match = re.fullmatch(r"rate\((\d+)\s+(second|seconds|minute|minutes|hour|hours|day|days)\)",
                         expression.strip())
    if not match:
        raise ValueError(f"unsupported schedule expression {expression!r}: use rate(N minutes)")
    unit = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}[match.group(2).rstrip("s")]
    return int(match.group(1)) * unit


def scheduled_event(stack: Stack, function_id: str, now: float) -> dict:
    """The event EventBridge Scheduler sends: the template's Input with its placeholders filled."""
    events = stack.resources[function_id]["Properties"]["Events"]
    schedule = next(e for e in events.values() if e["Type"] == "ScheduleV2")["Properties"]
    text = (schedule["Input"]
            .replace("<aws.scheduler.scheduled-time>",
                     datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
            .replace("<aws.scheduler.execution-id>", str(uuid.uuid4()))
            .replace("<aws.scheduler.schedule-arn>",
                     f"arn:aws:scheduler:{REGION}:123456789012:schedule/default/{function_id}-Tick"))
    return json.loads(text)


@dataclass
class QueueSource:
    """Lambda's SQS event source mapping: receive a batch, invoke, delete what succeeded.

    Failed records stay in flight and come back after the queue's visibility timeout; after
    maxReceiveCount receives SQS moves them to the dead-letter queue. An invocation that raises
    fails its whole batch, as on Lambda.
    """

    function: Function
    sqs: object
    queue_url: str
    queue_arn: str
    batch_size: int
    partial_failures: bool

    def poll(self, wait_seconds: int = 0) -> int:
        messages: list[dict] = []
        while len(messages) < self.batch_size:
            response = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=min(SQS_RECEIVE_MAX, self.batch_size - len(messages)),
                WaitTimeSeconds=wait_seconds if not messages else 0,
                AttributeNames=["All"], MessageAttributeNames=["All"])
            received = response.get("Messages", [])
            if not received:
                break
            messages.extend(received)
        if not messages:
            return 0
        event = {"Records": [self._record(m) for m in messages]}
        try:
            result = self.function.invoke(event)
            failed = {f["itemIdentifier"] for f in (result or {}).get("batchItemFailures", [])} \
                if self.partial_failures else set()
        except Exception:
            log.exception("%s failed its batch of %d; the messages will be retried",
                          self.function.logical_id, len(messages))
            failed = {m["MessageId"] for m in messages}
        done = [m for m in messages if m["MessageId"] not in failed]
        for start in range(0, len(done), SQS_RECEIVE_MAX):
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                for i, m in enumerate(done[start:start + SQS_RECEIVE_MAX])])
        if failed:
            log.warning("%s: %d of %d records failed and go back to the queue",
                        self.function.logical_id, len(failed), len(messages))
        return len(messages)

    def _record(self, message: dict) -> dict:
        return {"messageId": message["MessageId"], "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"], "attributes": message.get("Attributes", {}),
                "messageAttributes": message.get("MessageAttributes", {}),
                "md5OfBody": message["MD5OfBody"], "eventSource": "aws:sqs",
                "eventSourceARN": self.queue_arn, "awsRegion": REGION}


def queue_sources(stack: Stack, functions: dict[str, Function], sqs) -> list[QueueSource]:
    sources = []
    for logical_id, function in functions.items():
        for event in stack.resources[logical_id]["Properties"].get("Events", {}).values():
            if event["Type"] != "SQS":
                continue
            props = event["Properties"]
            queue_id = props["Queue"]["Fn::GetAtt"][0]
            sources.append(QueueSource(
                function, sqs, stack.refs[queue_id], stack.attributes[(queue_id, "Arn")],
                int(props.get("BatchSize", 10)),
                "ReportBatchItemFailures" in props.get("FunctionResponseTypes", [])))
    return sources
