"""/api/v1/rules: list, add and remove the rules (docs/design.md#rules), as `starfeed rules list`,
`add` and `remove` do: the same checks, the same ids, the same listing (starfeed/rules/manage.py).
A refused pattern is a problem whose errors name the match and the position of the error."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from pydantic import BaseModel, ConfigDict, Field

from starfeed.model import RuleAction, RuleField, RuleMatch
from starfeed.rules import manage
from starfeed.rules.grammar import RuleError
from starfeed.serve.rest.problems import ApiProblem, responses
from starfeed.serve.rest.views import V1
from starfeed.store import Storage

PATTERN_BYTES = 4096  # far past any pattern the rules allow (STARFEED_RULE_PATTERN_MAX says): the body stays small
RuleId = Annotated[str, Path(pattern=r"^[0-9a-f]{1,16}$", description="a rule's id, as GET /rules lists it")]


class Match(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: Literal[tuple(str(f) for f in RuleField)] = Field(  # type: ignore[valid-type]  # from the model's enum
        description="what it looks at: title, text (summary and content), author, link, host, category, source "
                    "(its id, title or URL), age (pattern: days; older than that), score (pattern: 0 to 1; the "
                    "deframer's score above it)")
    pattern: str = Field(min_length=1, max_length=PATTERN_BYTES,
                         description="words (case-insensitive, whole words) or a regular expression between slashes "
                                     "(RE2: /CVE-\\d+/); a number for age and score")
    negated: bool = Field(default=False, description="it holds when the pattern does not match")


class NewRule(BaseModel):
    """`starfeed rules add`'s arguments."""

    model_config = ConfigDict(extra="forbid")
    action: Literal["block", "keep", "tag"]
    tag: str | None = Field(default=None, max_length=PATTERN_BYTES, description="the category a tag rule adds")
    matches: list[Match] = Field(min_length=1, max_length=20)
    any: bool = Field(default=False, description="any match suffices; else all must hold")
    scope: str = Field(default="global", max_length=PATTERN_BYTES,
                       description="whose entries it judges: global, collection:NAME or source:ID")
    rule_set: str | None = Field(default=None, max_length=PATTERN_BYTES,
                                 description="a named set, served as the feed /r/SET/feed (its rules judge "
                                             "nothing else)")


class RuleView(NewRule):
    rule_id: str
    created_at: str
    command: str = Field(description="the `starfeed rules add` arguments that make it")


class ListedRule(RuleView):
    blocked: int = Field(description="stored entries it holds out of the feeds")


class Sweep(BaseModel):
    version: int = Field(description="the rules' version the stored entries are judged by")
    done: bool
    judged: int
    changed: int
    started_at: str
    finished_at: str
    in_progress: bool = Field(description="stored entries are still to be judged by the current rules")
    words: str


class RuleList(BaseModel):
    version: int = Field(description="bumped by every change; 0: no rule was ever saved")
    sweep: Sweep = Field(description="the re-evaluation of stored entries after the rules changed")
    rules: list[ListedRule]


class RuleChange(BaseModel):
    rule: RuleView
    version: int = Field(description="the rules' version after the change")


def router(storage: Storage, base: Callable[[], str]) -> Router:
    routes = Router()

    @routes.get(f"{V1}/rules", summary="Every rule, what it holds back, and how far the stored entries are judged "
                "by the current rules (`starfeed rules list --json`)", responses=responses({200: RuleList}))
    def list_rules() -> RuleList:
        return RuleList.model_validate(manage.listing_document(manage.listing(storage)))

    @routes.post(f"{V1}/rules", summary="Add a rule (`starfeed rules add`): checked, then judged at the next fetch "
                 "and on stored entries from the next scheduler run; the same rule added again is found (200)",
                 operation_id="addRule", responses=responses({201: RuleChange, 200: RuleChange}, 404, 409, 422))
    def add_rule(new: Annotated[NewRule, Body()]) -> Response[RuleChange]:
        rule = manage.draft(RuleAction(new.action), [RuleMatch(RuleField(m.field), m.pattern, m.negated)
                                                     for m in new.matches],
                            tag=new.tag, any_match=new.any, scope=new.scope, rule_set=new.rule_set)
        try:
            added = manage.add(storage, rule, time.time())
        except RuleError as exc:
            raise ApiProblem(422, f"rule refused: {exc}", [refused_in(rule, exc, storage)]) from None
        except manage.Refused as exc:
            raise ApiProblem(404 if isinstance(exc, manage.Missing) else 409, str(exc)) from None
        body = RuleChange(rule=RuleView.model_validate(manage.rule_document(added.rule)), version=added.version)
        headers = {"Location": f"{base().rstrip('/')}{V1}/rules/{added.rule.rule_id}"}
        return Response(200 if added.existed else 201, "application/json", body, headers)

    @routes.delete(f"{V1}/rules/<rule_id>", summary="Remove a rule (`starfeed rules remove`): what it held back "
                   "comes back from the next scheduler run", responses=responses({200: RuleChange}, 404, 409, 422))
    def remove_rule(rule_id: RuleId) -> RuleChange:
        try:
            rule, version = manage.remove(storage, rule_id, time.time())
        except manage.Refused as exc:
            raise ApiProblem(404 if isinstance(exc, manage.Missing) else 409, str(exc)) from None
        return RuleChange(rule=RuleView.model_validate(manage.rule_document(rule)), version=version)

    return routes


def refused_in(rule, error: RuleError, storage: Storage) -> dict:
    """Where in the body a refusal is: the match's pattern and the position in it, or the rule."""
    match = manage.faulty_match(rule, error, storage.settings)
    if match is None:
        return {"in": "body", "detail": str(error)}
    return {"in": f"body.matches[{rule.matches.index(match)}].pattern", "detail": str(error),
            "position": error.position}
