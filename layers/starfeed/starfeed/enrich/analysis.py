"""What an analyzer is given and what it answers: the AnalyzerResult (docs/design.md#analyzer-result). Pure.

An AnalyzerResult is stored whole on the entry (Entry.analyzer_result) as this JSON object:

    title           the deframed title
    summary         a neutral summary
    facts           the facts, a list of statements
    score           0-1: how far the original framing departs from the facts (0 = neutral)
    model           the analyzer's model ("mock" for the mock)
    tokens_in       tokens read by the model
    tokens_out      tokens written by the model
    latency_ms      the model's time
    prompt_version  which system prompt ("default:<hash>" or "source:<hash>")
    input           "article" (the downloaded page's main text) or "feed" (the feed's own content)
    download_error  why the article was not used (with input "feed"), else null
    analyzed_at     when, RFC 3339 UTC
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from typing import Protocol

# What the model must answer: the tool's input schema (Bedrock's structured output), and the
# bounds a stored result is held to whatever the model wrote.
TOOL_NAME = "record_analysis"
MAX_TITLE = 300
MAX_SUMMARY = 2000
MAX_FACTS = 12
MAX_FACT = 500
RESULT_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "a neutral headline stating the main fact",
                  "maxLength": MAX_TITLE},
        "summary": {"type": "string", "description": "two to four neutral sentences",
                    "maxLength": MAX_SUMMARY},
        "facts": {"type": "array", "items": {"type": "string", "maxLength": MAX_FACT},
                  "maxItems": MAX_FACTS, "description": "the verifiable statements, one sentence each"},
        "score": {"type": "number", "minimum": 0, "maximum": 1,
                  "description": "how far the framing departs from the facts: 0 neutral, 1 contradicts them"},
    },
    "required": ["title", "summary", "facts", "score"],
}


class AnalyzerError(Exception):
    """The analyzer gave no usable result (a malformed answer, a refusal, an error after retries).
    The entry is retried later; the reason is recorded on its source. tokens: what the failed
    call used all the same (a model's malformed answer is billed)."""

    def __init__(self, message: str, tokens: int = 0):
        super().__init__(message)
        self.tokens = tokens


@dataclass(frozen=True)
class Prompt:
    text: str
    version: str  # "default:<sha256 prefix>" or "source:<sha256 prefix>": changes with the text


@dataclass(frozen=True)
class AnalysisRequest:
    title: str
    text: str  # the article's main text, or the feed's own content
    link: str | None
    prompt: Prompt
    used: str  # "article" | "feed"
    download_error: str | None = None


@dataclass(frozen=True)
class AnalyzerResult:
    title: str
    summary: str
    facts: list[str]
    score: float
    model: str
    tokens_in: int
    tokens_out: int
    latency_ms: int
    prompt_version: str
    input: str
    download_error: str | None = None
    analyzed_at: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


@dataclass(frozen=True)
class Analysis:
    """What a model answered through the tool, and what it cost."""

    title: str
    summary: str
    facts: list[str] = field(default_factory=list)
    score: float = 0.0
    model: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0

    def result(self, request: AnalysisRequest, analyzed_at: str) -> AnalyzerResult:
        return AnalyzerResult(self.title, self.summary, list(self.facts), self.score, self.model,
                              self.tokens_in, self.tokens_out, self.latency_ms, request.prompt.version,
                              request.used, request.download_error, analyzed_at)


class Analyzer(Protocol):
    """The analyzer's interface (docs/design.md#analyzers): an item in, an AnalyzerResult's content out."""

    name: str

    def analyze(self, request: AnalysisRequest) -> Analysis: ...


def checked(answer: object) -> dict:
    """The model's tool input held to RESULT_SCHEMA, or AnalyzerError saying what is wrong."""
    if not isinstance(answer, dict):
        raise AnalyzerError(f"the model's answer is a {type(answer).__name__}, not an object")
    missing = [name for name in RESULT_SCHEMA["required"] if name not in answer]
    if missing:
        raise AnalyzerError(f"the model's answer lacks {', '.join(missing)}")
    title, summary, facts, score = (answer[k] for k in ("title", "summary", "facts", "score"))
    if not isinstance(title, str) or not title.strip():
        raise AnalyzerError("the model's title is empty or not text")
    if not isinstance(summary, str):
        raise AnalyzerError("the model's summary is not text")
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        raise AnalyzerError("the model's facts are not a list of statements")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) \
            or not 0 <= score <= 1:
        raise AnalyzerError(f"the model's score {score!r} is not a number from 0 to 1")
    return {"title": " ".join(title.split())[:MAX_TITLE], "summary": summary.strip()[:MAX_SUMMARY],
            "facts": [" ".join(f.split())[:MAX_FACT] for f in facts if f.strip()][:MAX_FACTS],
            "score": round(float(score), 3)}


@cache
def default_prompt() -> Prompt:
    text = resources.files("starfeed.enrich").joinpath("prompts/default.txt").read_text(encoding="utf-8")
    return Prompt(text, "default:" + _digest(text))


def prompt_for(own: str | None) -> Prompt:
    """A source's own prompt (`source prompt ID FILE`), else the default one in the package."""
    if own and own.strip():
        return Prompt(own, "source:" + _digest(own))
    return default_prompt()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def score_of(entry_result: dict | None) -> float | None:
    """A stored result's score, or None when the entry is not analyzed (or the value is unusable)."""
    score = (entry_result or {}).get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return None
    return float(score)

