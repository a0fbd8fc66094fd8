"""RFC 9457 problem details: every error of the REST API, with the status's own title and a
detail a person can act on."""

from __future__ import annotations

import json
from http import HTTPStatus

from aws_lambda_powertools.event_handler import Response

PROBLEM_JSON = "application/problem+json"


class ApiProblem(Exception):
    """Raised by a route: answered as a problem document with this status and detail."""

    def __init__(self, status: int, detail: str, errors: list[dict] | None = None):
        super().__init__(detail)
        self.status, self.detail, self.errors = status, detail, errors


def problem(status: int, detail: str | None = None, instance: str | None = None,
            errors: list[dict] | None = None) -> Response:
    document = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status}
    document.update({k: v for k, v in (("detail", detail), ("instance", instance), ("errors", errors)) if v})
    return Response(status, PROBLEM_JSON, json.dumps(document, ensure_ascii=False))


def invalid_parameters(errors: list[dict]) -> list[dict]:
    """pydantic's errors as a person reads them: where (query.limit, body.url) and why; the input
    is left out, as it may be long or hold what should not be echoed."""
    return [{"in": ".".join(str(part) for part in e.get("loc", ())), "detail": e.get("msg", "invalid")}
            for e in errors]


def responses(answers: dict[int, type | str], *problems: int) -> dict:
    """A route's OpenAPI responses: its answers (status -> the JSON body's model, or the media
    type of another body), then the problems it may give."""
    from starfeed.serve.rest.models import Problem

    documented = {}
    for status, body in answers.items():
        content = {body: {}} if isinstance(body, str) else {"application/json": {"model": body}}
        documented[status] = {"description": HTTPStatus(status).phrase, "content": content}
    return {**documented, **{status: {"description": HTTPStatus(status).phrase,
                                      "content": {PROBLEM_JSON: {"model": Problem}}} for status in problems}}
