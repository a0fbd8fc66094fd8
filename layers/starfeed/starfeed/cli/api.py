"""starfeed api: one request to the REST API (/api/v1), signed with AWS Signature Version 4, as the
API's IAM authorization asks on AWS (under `make run` the signature is not needed, and harmless)."""

from __future__ import annotations

import json
import sys

from starfeed.cli.common import CliError, connect

V1 = "/api/v1"


def add_commands(commands) -> None:
    api = commands.add_parser("api", help="call the REST API (/api/v1), SigV4-signed",
                              description="Send one request to the REST API of the stack (`make run`'s, or "
                              "--stack NAME's), signed with your AWS credentials for service execute-api. "
                              "Prints the answer's body; a problem goes to stderr, with exit code 1.")
    api.add_argument("method", type=str.upper, choices=("GET", "POST", "DELETE"))
    api.add_argument("path", help="under /api/v1, which may be left out: feeds, /feeds/ID/entries?limit=5, …")
    api.add_argument("--data", metavar="JSON", help='the request body, e.g. \'{"url": "https://example.org/feed"}\'')
    api.set_defaults(action=_call)


def api_url(base: str, path: str) -> str:
    path = path if path.startswith("/") else f"/{path}"
    return base.rstrip("/") + (path if path.startswith(V1 + "/") or path == V1 else V1 + path)


def signed(method: str, url: str, body: bytes, region: str) -> tuple[str, dict[str, str]]:
    """The request's headers, SigV4-signed with the environment's credentials (botocore's chain)."""
    import boto3
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    credentials = boto3.Session().get_credentials()
    if credentials is None:
        raise CliError("no AWS credentials to sign with: configure them (aws configure, AWS_PROFILE)")
    request = AWSRequest(method=method, url=url, data=body,
                         headers={"Content-Type": "application/json"} if body else {})
    SigV4Auth(credentials.get_frozen_credentials(), "execute-api", region).add_auth(request)
    return request.url, dict(request.headers.items())


def _call(args) -> int:
    import requests

    settings = connect(args.stack).settings
    body = b""
    if args.data is not None:
        try:
            body = json.dumps(json.loads(args.data)).encode()
        except ValueError as exc:
            raise CliError(f"--data is not JSON: {exc}") from None
    url, headers = signed(args.method, api_url(settings.public_url, args.path), body, settings.region)
    try:
        response = requests.request(args.method, url, data=body or None, headers=headers, timeout=60)
    except requests.RequestException as exc:
        raise CliError(f"cannot reach {url}: {exc}") from None
    if response.headers.get("Content-Type", "").startswith(("application/json", "application/problem+json")):
        document = response.json()
        if response.ok:
            print(json.dumps(document, indent=1, ensure_ascii=False))
            return 0
        print(f"starfeed: {response.status_code} {document.get('title', '')}: "
              f"{document.get('detail') or document.get('message') or ''}".rstrip(": "), file=sys.stderr)
        for error in document.get("errors") or []:
            print(f"  {error.get('in')}: {error.get('detail')}", file=sys.stderr)
        return 1
    if not response.ok:
        raise CliError(f"{response.status_code} {response.reason}: {response.text[:300]}")
    sys.stdout.buffer.write(response.content)  # a raw payload, as stored
    return 0
