import json
import logging
import sys
from pathlib import Path

import pytest

from starfeed.local.botocore_reuse import reuse_botocore_work

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from origin import Origin  # noqa: E402

# Each test's cold starts build their clients cheaply, as the local stack's do.
reuse_botocore_work()


def shared_corpus(*parts: str) -> Path:
    """A folder of ../shared/corpora, or a skip saying why it is absent (a user's clone)."""
    path = SHARED.joinpath("corpora", *parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared corpora live beside the repository in CI")
    return path


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    """The local stack: moto in server mode with every resource of template.yaml, one for each
    pytest process (each xdist worker); fresh_stack empties it before each test that uses it."""
    from starfeed.local.stack import LocalStack

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    state = tmp_path_factory.mktemp("state")
    # A fetch retries a network fault 3 times; the origins of tests gone by refuse at once, so the
    # pause between tries is short here (its schedule is tests/unit/test_fetch_http.py's to check).
    local = LocalStack({"STARFEED_PUBLIC_URL": "http://feeds.test", "STARFEED_ALLOW_PRIVATE_NETWORKS": "1",
                        "STARFEED_RETRY_BACKOFF": "0.05", "STARFEED_BACKFILL_PAUSE": "0"}, root=ROOT, state=state)
    yield local
    local.close()


@pytest.fixture(autouse=True)
def fresh_stack(request):
    """A test that uses the stack starts from an empty one, whatever the tests before it left."""
    if "stack" in request.fixturenames:
        from fresh_stack import empty

        empty(request.getfixturevalue("stack"))


@pytest.fixture
def storage(stack):
    """A Storage of the test's own: its memos (the pace, the token) start empty too."""
    from starfeed.settings import Settings
    from starfeed.store import Storage

    return Storage(Settings.from_env(stack.environment))


def _origin():
    server = Origin()
    yield server
    server.close()


# A loopback origin, and a second one: another host, for what must not cross between them.
origin = pytest.fixture(_origin)
other_origin = pytest.fixture(_origin)


def load_event(name: str) -> dict:
    return json.loads((ROOT / "events" / name).read_text())


def body_of(response: dict) -> str:
    """The response body as a client reads it: base64 decoded, and gunzipped if gzipped."""
    import base64
    import gzip

    body = response.get("body") or ""
    if not response.get("isBase64Encoded"):
        return body
    data = base64.b64decode(body)
    if (response.get("headers") or {}).get("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    return data.decode()


def aggregate_rendered(stack, storage) -> None:
    """The feed of everything rendered to the bucket, as the renderer writes it (empty on a stack of
    no sources), for tests of how it is served."""
    from starfeed.render.pages import AGGREGATE

    storage.queues.send_render([AGGREGATE])
    stack.drain()


def http_get(stack, path: str, headers: dict | None = None) -> dict:
    """Invoke the api function with an API Gateway HTTP API v2 event, as API Gateway would."""
    from starfeed.local.http_bridge import http_api_event

    return stack.functions["ApiFunction"].invoke(
        http_api_event("GET", path, headers or {}, b"", "198.51.100.7"))


def api_call(stack, method: str, path: str, body: dict | None = None) -> dict:
    """Invoke the function template.yaml routes this request to, with the event API Gateway
    would send (a loopback caller: authorized on the IAM routes, as `make run` does)."""
    from starfeed.local.http_bridge import http_api_event, http_routes, route_for

    route = route_for(http_routes(stack.stack), method, path.split("?", 1)[0])
    data, headers = (json.dumps(body).encode(), {"content-type": "application/json"}) if body is not None else (b"", {})
    return stack.functions[route.function].invoke(http_api_event(method, path, headers, data, "127.0.0.1", route))


@pytest.fixture(scope="session")
def api_url(stack):
    """The local stack's HTTP API on loopback, routed as template.yaml routes it (`make run`'s)."""
    import threading

    from starfeed.local.http_bridge import http_routes, serve

    server = serve("127.0.0.1", 0)
    server.routes, server.functions = http_routes(stack.stack), stack.functions
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def queued(stack, *names: str) -> int:
    """Messages in these queues, visible or in flight (a failed record stays in flight until its
    retry)."""
    total = 0
    for name in names:
        depth = stack.sqs.get_queue_attributes(QueueUrl=stack.queue(name), AttributeNames=["All"])["Attributes"]
        total += int(depth["ApproximateNumberOfMessages"]) + int(depth["ApproximateNumberOfMessagesNotVisible"])
    return total


def dead_letters(stack) -> int:
    return queued(stack, "FetchDeadLetterQueue", "RenderDeadLetterQueue")


def failed_records(stack) -> int:
    """After a drain, what is left in the work queues failed: nothing else stays."""
    return queued(stack, "FetchQueue", "RenderQueue")


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """The starfeed command in this process: its exit code, stdout and stderr."""
    from starfeed.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse refusing the arguments
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def row_of(out: str, source_id: str) -> str:
    """The line of `source list` that shows this source."""
    return next(r for r in out.splitlines() if r.startswith(source_id))


# The longest modules (a whole stack booted in a process of its own, and the IAM scenario) start
# first, so two workers do not wait at the end for one of them.
LONGEST_FIRST = ("test_local_run.py", "test_iam.py")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.path.name not in LONGEST_FIRST)
