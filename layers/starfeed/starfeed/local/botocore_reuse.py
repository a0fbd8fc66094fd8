"""botocore's setup work done once per process instead of once per client. Locally, every
function's Storage builds PynamoDB models whose connections each start a botocore session, and
a new session parses its service models' JSON and builds their handlers again: about 60 ms of
CPU per connection, where a client of an existing session takes 6. On Lambda a cold start pays
this once per model; a local stack (and each integration test's cold starts) paid it hundreds of
times. What the clients send and receive is unchanged: each connection keeps a client of its own."""

from __future__ import annotations

import threading
from typing import Any

_done = threading.Lock()
_installed = False


def reuse_botocore_work() -> None:
    """Parse each model file once per process, and give PynamoDB's connections one botocore
    session per thread (per thread, as PynamoDB keeps them: botocore does not create clients
    thread-safely). Idempotent."""
    global _installed
    with _done:
        if _installed:
            return
        _parse_model_files_once()
        _one_session_per_thread()
        _installed = True


def _parse_model_files_once() -> None:
    # The files do not change while the process runs; botocore already hands one parsed copy to
    # every client of a session.
    from botocore.loaders import JSONFileLoader

    parse, parsed = JSONFileLoader.load_file, {}

    def load_file(self: JSONFileLoader, file_path: str) -> Any:
        if file_path not in parsed:
            parsed[file_path] = parse(self, file_path)
        return parsed[file_path]

    JSONFileLoader.load_file = load_file  # type: ignore[method-assign]  # the once-parsed copy


def _one_session_per_thread() -> None:
    from pynamodb.connection import base

    new_session, sessions = base.get_session, threading.local()

    def get_session() -> Any:
        if getattr(sessions, "session", None) is None:
            sessions.session = new_session()
        return sessions.session

    base.get_session = get_session
