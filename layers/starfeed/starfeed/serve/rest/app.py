"""The REST API's resolver: Powertools with data validation, its routes split by concern, its
OpenAPI document at /api/v1/openapi.json, and every error an RFC 9457 problem."""

from __future__ import annotations

import base64
import json
import logging
from functools import cached_property
from urllib.parse import quote

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.models import APIKey, APIKeyIn, Server

from starfeed.serve.rest import entries, feeds, rules
from starfeed.serve.rest.problems import PROBLEM_JSON, ApiProblem, invalid_parameters, problem
from starfeed.serve.rest.views import V1
from starfeed.store import Storage

log = logging.getLogger(__name__)
VERSION = "1.0.0"
FORBIDDEN = {"statusCode": 403, "headers": {"Content-Type": PROBLEM_JSON}, "isBase64Encoded": False,
             "body": json.dumps({"type": "about:blank", "title": "Forbidden", "status": 403,
                                 "detail": "IAM authorization required: sign the request with AWS SigV4 "
                                           "for service execute-api"})}
ENTRY_PREFIX = f"{V1}/entries/"


def routed_path(path: str) -> str:
    """API Gateway's HTTP API hands the path over percent-decoded, so an entry uid's slashes split
    it; GET /api/v1/entries/{uid} takes the rest of the path whole and encodes it again, which
    its route matches as one segment (the route decodes it once more: see entries.one_entry)."""
    if path.startswith(ENTRY_PREFIX) and len(path) > len(ENTRY_PREFIX):
        return ENTRY_PREFIX + quote(path[len(ENTRY_PREFIX):], safe="")
    return path


# API Gateway's IAM authorization, in OpenAPI's words (it has no SigV4 scheme of its own).
SIGV4 = {"security_schemes": {"sigv4": APIKey(name="Authorization", in_=APIKeyIn.header,
                                              description="AWS Signature Version 4 for service execute-api: "
                                                          "IAM authorization (execute-api:Invoke)")},
         "security": [{"sigv4": []}]}


def allowed_methods(paths: dict[str, dict], path: str) -> list[str]:
    """The methods the document gives a path (its templates matched segment by segment)."""
    segments = path.rstrip("/").split("/")
    for template, operations in paths.items():
        parts = template.split("/")
        if len(parts) == len(segments) and all(p.startswith("{") or p == s for p, s in zip(parts, segments)):
            return sorted(m.upper() for m in operations)
    return []


def readable_body(event: dict) -> bool:
    """Whether a body API Gateway passed as base64 is UTF-8 text, as a JSON body is: any other
    bytes are a request that is not valid (422), not a failure of ours."""
    if not event.get("isBase64Encoded") or not event.get("body"):
        return True
    try:
        base64.b64decode(event["body"]).decode()
    except (ValueError, UnicodeDecodeError):
        return False
    return True


def authorized(event: dict) -> bool:
    """API Gateway passes a request on only once its SigV4 signature is verified, naming the
    caller in requestContext.authorizer.iam (the local bridge does so for loopback callers). A
    request without it came by a route without IAM authorization: refused, whatever the route."""
    return bool(((event.get("requestContext") or {}).get("authorizer") or {}).get("iam"))


class RestApi:
    def __init__(self, storage: Storage, public_url: str | None = None):
        """public_url: where the API answers, for its links; None (on AWS, where the function
        cannot name its own API without a circular dependency) takes the domain API Gateway was
        called at."""
        self.storage = storage
        app = APIGatewayHttpResolver(enable_validation=True)

        def base() -> str:
            return public_url or f"https://{app.current_event.request_context.domain_name}"

        app.include_router(feeds.router(storage, base))
        app.include_router(entries.router(storage, base))
        app.include_router(rules.router(storage, base))
        self.base = base

        @app.get(f"{V1}/openapi.json", summary="This document", include_in_schema=False)
        def openapi():
            return Response(200, "application/json", self.openapi_document)

        @app.exception_handler(ApiProblem)
        def api_problem(exc: ApiProblem):
            return problem(exc.status, exc.detail, app.current_event.path, exc.errors)

        @app.exception_handler(RequestValidationError)
        def invalid(exc: RequestValidationError):
            return problem(422, "the request is not valid: see errors", app.current_event.path,
                           invalid_parameters(exc.errors()))

        @app.exception_handler(Exception)
        def failed(exc: Exception):  # a problem document still, with what the log is found by
            log.exception("rest: %s failed", app.current_event.path)
            request = (app.current_event.raw_event.get("requestContext") or {}).get("requestId")
            return problem(500, f"the request failed on our side ({type(exc).__name__}); request id {request}",
                           app.current_event.path)

        @app.not_found
        def not_found(_exc):
            event = app.current_event
            allowed = allowed_methods(self.paths, event.path)
            if allowed and event.http_method not in allowed:
                response = problem(405, f"{event.http_method} is not allowed here: this route takes "
                                        f"{', '.join(allowed)}", event.path)
                response.headers["Allow"] = ", ".join(allowed)
                return response
            return problem(404, f"no such route: GET {V1}/openapi.json lists them", event.path)

        self.app = app

    @cached_property
    def paths(self) -> dict:
        return json.loads(self.openapi_document)["paths"]

    @cached_property
    def openapi_document(self) -> str:
        return self.app.get_openapi_json_schema(
            title="starfeed", version=VERSION,
            description="Feeds, entries, raw payloads and rules of a starfeed deployment. Lists are "
                        "paged: follow `next` or the Link rel=next header. Errors are RFC 9457 problems.",
            servers=[Server(url=self.base().rstrip("/") or "/")],
            **(SIGV4 if self.storage.settings.api_auth == "iam" else {}))

    def resolve(self, event: dict, context) -> dict:
        if not authorized(event):
            return FORBIDDEN
        if not readable_body(event):
            answer = problem(422, "the request's body is not UTF-8 text: send JSON", event.get("rawPath"))
            return {"statusCode": 422, "headers": {"Content-Type": PROBLEM_JSON}, "isBase64Encoded": False,
                    "body": answer.body}
        event = {**event, "rawPath": routed_path(event.get("rawPath") or "/")}
        http = (event.get("requestContext") or {}).get("http") or {}
        if http.get("method") == "HEAD":  # RFC 9110 section 9.3.2: GET's answer without its body
            event["requestContext"] = {**event["requestContext"], "http": {**http, "method": "GET"}}
            return {**self.app.resolve(event, context), "body": "", "isBase64Encoded": False}
        return self.app.resolve(event, context)

