"""One request to a stack's REST API (/api/v1), signed with AWS Signature Version 4 for service
execute-api, as the API's IAM authorization asks on AWS (under `make run` the signature is not
needed, and harmless). `starfeed api` calls it; so may any program."""

from __future__ import annotations

import boto3
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from starfeed.settings import Settings

V1 = "/api/v1"


class CannotCall(Exception):
    """The request was not answered: no credentials to sign it with, or no answer."""


def call(settings: Settings, method: str, path: str, body: bytes = b"") -> requests.Response:
    """The stack's answer to METHOD path (under /api/v1, which path may leave out), whatever its
    status."""
    url, headers = signed(method, api_url(settings.public_url, path), body, settings.region)
    try:
        return requests.request(method, url, data=body or None, headers=headers, timeout=60)
    except requests.RequestException as exc:
        raise CannotCall(f"cannot reach {url}: {exc}") from exc


def api_url(base: str, path: str) -> str:
    path = path if path.startswith("/") else f"/{path}"
    return base.rstrip("/") + (path if path.startswith(V1 + "/") or path == V1 else V1 + path)


def signed(method: str, url: str, body: bytes, region: str) -> tuple[str, dict[str, str]]:
    """The request's headers, SigV4-signed with the environment's credentials (botocore's chain)."""
    credentials = boto3.Session().get_credentials()
    if credentials is None:
        raise CannotCall("no AWS credentials to sign with: configure them (aws configure, AWS_PROFILE)")
    request = AWSRequest(method=method, url=url, data=body,
                         headers={"Content-Type": "application/json"} if body else {})
    SigV4Auth(credentials.get_frozen_credentials(), "execute-api", region).add_auth(request)
    return request.url, dict(request.headers.items())
