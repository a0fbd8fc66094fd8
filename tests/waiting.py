"""Waiting for what a test can observe, instead of sleeping for a guessed time."""

import time


def eventually(condition, seconds: float = 30, every: float = 0.1, what: str = "the condition"):
    """condition()'s first truthy value, polled every `every` seconds; fails after `seconds` (a
    bound on a hang, not a performance claim)."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {seconds} s")
        time.sleep(every)
