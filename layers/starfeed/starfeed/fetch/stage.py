"""The stages of one source's job, so that whatever breaks inside one is that source's failure,
recorded on it with the stage and the cause, never an exception that fails its message."""

from __future__ import annotations

from contextlib import contextmanager

# Where a source's job can break on starfeed's side: such a failure is of class FailureClass.OURS,
# not the publisher's (`starfeed status` counts those against the error budget).
STAGES = ("fetch", "parse", "store raw", "store", "render request")


class StageFailed(Exception):
    """Something unexpected broke while one source was handled: the source records it, with the
    stage, instead of failing its message and holding its host's message group."""

    def __init__(self, stage: str, cause: BaseException):
        super().__init__(f"{stage}: {describe(cause)}")
        self.stage = stage


def describe(exc: BaseException) -> str:
    """An exception as one line a person can act on (AWS errors by their code)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict) and response.get("Error", {}).get("Code"):
        error = response["Error"]
        return f"{error['Code']}: {error.get('Message') or type(exc).__name__}"[:300]
    cause = getattr(exc, "cause_response_code", None)  # PynamoDB wraps botocore's errors
    if cause:
        return f"{cause}: {getattr(exc, 'cause_response_message', None) or exc}"[:300]
    return f"{type(exc).__name__}: {exc}"[:300]


@contextmanager
def stage(name: str):
    assert name in STAGES, name
    try:
        yield
    except StageFailed:
        raise
    except Exception as exc:
        raise StageFailed(name, exc) from exc
