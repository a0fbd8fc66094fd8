"""Faults on purpose: a WSGI layer in front of moto that answers chosen AWS requests with the
error AWS itself would send (throttling, S3 slow-downs), so tests see what boto3 and PynamoDB do
with a real error response, their own retries included. It also makes DynamoDB's requests atomic
as on AWS, which moto's are not when they come at once. Development only."""

from __future__ import annotations

import io
import json
import threading
from dataclasses import dataclass
from urllib.parse import unquote

# What each service answers when it refuses a request, as botocore parses it.
_JSON_ERRORS = {
    "ThrottlingException": "com.amazon.coral.availability#ThrottlingException",
    "ProvisionedThroughputExceededException":
        "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
    "InternalServerError": "com.amazonaws.dynamodb.v20120810#InternalServerError",
}


@dataclass
class Fault:
    service: str  # dynamodb | s3 | sqs
    operation: str  # e.g. BatchWriteItem, UpdateItem, PutObject, SendMessage
    resource: str  # S3: the bucket; others: any text of the request (a table, a key); "" for any
    code: str  # the error code AWS sends, e.g. ThrottlingException or SlowDown
    key: str = ""  # S3 only: a fragment of the object key

    def matches(self, service: str, operation: str, resource: str, key: str) -> bool:
        return (self.service == service and self.operation == operation and self.resource in resource
                and self.key in key)


class FaultInjector:
    def __init__(self, app):
        self._app = app
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._dynamodb = threading.Lock()

    def inject(self, service: str, operation: str, code: str, resource: str = "", *, key: str = "") -> Fault:
        """Every matching request fails until clear()."""
        fault = Fault(service, operation, resource, code, key)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def __call__(self, environ, start_response):
        if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB"):
            # DynamoDB checks a write's condition and writes it as one step; moto does both
            # unlocked, so two threads' conditional writes (two scheduler runs leasing one
            # source) could both pass. One DynamoDB request at a time, as its items see them.
            with self._dynamodb:
                return self._serve(environ, start_response)
        return self._serve(environ, start_response)

    def _serve(self, environ, start_response):
        if not self._faults:
            return self._app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(body)
        service, operation, resource, key = _describe(environ, body)
        with self._lock:
            fault = next((f for f in self._faults if f.matches(service, operation, resource, key)), None)
        if fault is None:
            return self._app(environ, start_response)
        status, content_type, payload = _error(service, fault.code)
        start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(payload)))])
        return [payload]


def _describe(environ, body: bytes) -> tuple[str, str, str, str]:
    """(service, operation, resource, object key) of one request to moto."""
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    if target:
        prefix, _, operation = target.partition(".")
        service = "dynamodb" if prefix.startswith("DynamoDB") else "sqs" if prefix == "AmazonSQS" else prefix
        # The whole request names the table or queue, and the item keys a test may aim at.
        return service, operation, body.decode("utf-8", "replace"), ""
    path = unquote(environ.get("PATH_INFO", ""))
    bucket, _, key = path.lstrip("/").partition("/")
    host = environ.get("HTTP_HOST", "")
    if not host.replace(".", "").split(":")[0].isdigit() and host.count(".") and not host.startswith("localhost"):
        bucket, key = host.split(".", 1)[0], path.lstrip("/")  # virtual-hosted style
    operation = {"PUT": "PutObject", "GET": "GetObject", "HEAD": "HeadObject",
                 "DELETE": "DeleteObject"}.get(environ.get("REQUEST_METHOD", ""), "")
    return "s3", operation, bucket, key


def _error(service: str, code: str) -> tuple[str, str, bytes]:
    if service == "s3":
        status = "503 Slow Down" if code == "SlowDown" else "500 Internal Server Error"
        xml = (f"<?xml version='1.0' encoding='UTF-8'?>"
               f"<Error><Code>{code}</Code><Message>injected fault</Message></Error>")
        return status, "application/xml", xml.encode()
    document = {"__type": _JSON_ERRORS.get(code, f"com.amazonaws.{service}#{code}"), "message": "injected fault"}
    return "400 Bad Request", "application/x-amz-json-1.0", json.dumps(document).encode()


def moto_server():
    """moto's threaded server on a free loopback port, with a FaultInjector (`.faults`) in front
    of its WSGI application."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from moto.server import ThreadedMotoServer
    from werkzeug.serving import make_server

    class Server(ThreadedMotoServer):
        faults: FaultInjector

        def _server_entry(self) -> None:  # ThreadedMotoServer's, with the injector wrapped around
            self.faults = FaultInjector(DomainDispatcherApplication(create_backend_app))
            self._server = make_server(self._ip_address, self._port, self.faults, True,
                                       request_handler=MotoRequestHandler)
            self._server_ready_event.set()
            self._server.serve_forever()

    return Server(ip_address="127.0.0.1", port=0, verbose=False)
