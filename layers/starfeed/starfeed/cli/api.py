"""starfeed api: one request to the REST API (/api/v1), signed with AWS Signature Version 4 by
starfeed.rest_client; the answer's body printed."""

from __future__ import annotations

import json
import sys

from starfeed import rest_client
from starfeed.cli.common import CliError, connect


def add_commands(commands) -> None:
    api = commands.add_parser("api", help="call the REST API (/api/v1), SigV4-signed",
                              description="Send one request to the REST API of the stack (`make run`'s, or "
                              "--stack NAME's), signed with your AWS credentials for service execute-api. "
                              "Prints the answer's body; a problem goes to stderr, with exit code 1.")
    api.add_argument("method", type=str.upper, choices=("GET", "POST", "DELETE"))
    api.add_argument("path", help="under /api/v1, which may be left out: feeds, /feeds/ID/entries?limit=5, …")
    api.add_argument("--data", metavar="JSON", help='the request body, e.g. \'{"url": "https://example.org/feed"}\'')
    api.set_defaults(action=_call)


def _call(args) -> int:
    settings = connect(args.stack).settings
    body = b""
    if args.data is not None:
        try:
            body = json.dumps(json.loads(args.data)).encode()
        except ValueError as exc:
            raise CliError(f"--data is not JSON: {exc}") from None
    try:
        response = rest_client.call(settings, args.method, args.path, body)
    except rest_client.CannotCall as exc:
        raise CliError(str(exc)) from None
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
