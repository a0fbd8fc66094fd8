"""Every AWS request this process makes, shown to an observer: how tests check IAM grants
against real calls (tests/aws_calls.py) and how bench/aws_requests.py counts requests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from botocore.client import BaseClient


@contextmanager
def observed(observer: Callable[[str, str, dict], None]) -> Iterator[None]:
    """observer(service, operation, params) before each botocore call (PynamoDB's included)."""
    original = BaseClient._make_api_call

    def call(client, operation, params):
        observer(client.meta.service_model.service_name, operation, params)
        return original(client, operation, params)

    BaseClient._make_api_call = call
    try:
        yield
    finally:
        BaseClient._make_api_call = original
