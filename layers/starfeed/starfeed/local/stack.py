"""The whole stack on one machine: moto in server mode, resources from template.yaml, and the
functions driven by their real event sources. Used by `make run` and by the integration tests."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import boto3

from starfeed.local import template
from starfeed.local.botocore_reuse import reuse_botocore_work
from starfeed.local.runtime import Function, QueueSource, load_function, load_functions, queue_sources, scheduled_event
from starfeed.local.state import STACK_FILE, project_root, state_dir
from starfeed.urlpolicy import redact

log = logging.getLogger(__name__)

LOCAL_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
                     "AWS_SESSION_TOKEN": "local", "AWS_REGION": template.REGION,
                     "AWS_DEFAULT_REGION": template.REGION}


class LocalStack:
    def __init__(self, environment: dict[str, str] | None = None, root: Path | None = None,
                 state: Path | None = None):
        from starfeed.local.faults import moto_server

        reuse_botocore_work()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.root = root or project_root()
        self.state = state or state_dir()
        self._moto = moto_server()
        self._moto.start()
        self.faults = self._moto.faults  # tests inject AWS errors here
        host, port = self._moto.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        session = boto3.Session(aws_access_key_id="local", aws_secret_access_key="local",
                                region_name=template.REGION)
        self.sqs = session.client("sqs", endpoint_url=self.endpoint)
        self.stack = template.create(template.load(self.root / "template.yaml"),
                                     _EndpointSession(session, self.endpoint))
        self.environment = self._environment(environment or {})
        # The functions read their settings at import, as on a cold start: set them first.
        os.environ.update(self.environment)
        self.functions: dict[str, Function] = load_functions(self.stack, self.root)
        self.queues: list[QueueSource] = queue_sources(self.stack, self.functions, self.sqs)
        self._write_stack_file()

    def _environment(self, overrides: dict[str, str]) -> dict[str, str]:
        env: dict[str, str] = {}
        for logical_id in self.stack.of_type("AWS::Serverless::Function"):
            env.update(self.stack.function_environment(logical_id))
        env.update(LOCAL_CREDENTIALS)
        # CloudWatch metrics are EMF lines on stdout; locally they would drown the plain log.
        env["POWERTOOLS_METRICS_DISABLED"] = "true"
        env["AWS_ENDPOINT_URL"] = self.endpoint
        # No model locally unless asked for (STARFEED_ANALYZER=bedrock and an endpoint for it).
        env["STARFEED_ANALYZER"] = "mock"
        # No API Gateway to verify signatures: the HTTP bridge lets loopback callers in instead.
        env["STARFEED_API_AUTH"] = "loopback"
        # Settings from the user's environment win over the template's values, as a deployment
        # parameter would.
        env.update({k: v for k, v in os.environ.items() if k.startswith("STARFEED_")})
        env.update(overrides)
        return env

    def _write_stack_file(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        path = self.state / STACK_FILE
        # What the CLI needs to reach this stack, and nothing secret.
        keep = {k: v for k, v in self.environment.items()
                if (not k.startswith("AWS_") or k in ("AWS_ENDPOINT_URL", "AWS_REGION"))
                and not any(word in k for word in ("TOKEN", "SECRET", "PASSWORD"))}
        if keep.get("STARFEED_PROXY"):  # the proxy, not its credentials
            keep["STARFEED_PROXY"] = redact(keep["STARFEED_PROXY"])
        path.write_text(json.dumps({"pid": os.getpid(), "environment": keep}, indent=1))
        path.chmod(0o600)

    # Driving the functions -------------------------------------------------------------------

    def tick(self, now: float | None = None) -> dict:
        scheduler = self._scheduled_function()
        return self.functions[scheduler].invoke(
            scheduled_event(self.stack, scheduler, time.time() if now is None else now))

    def drain(self, max_rounds: int = 1000) -> int:
        """Run every queue's function until no queue returns a message. Each queue is emptied in
        turn (fetches, then renders), as the renderer's batching window gathers a burst of render
        requests into few batches on Lambda."""
        handled = 0
        for _ in range(max_rounds):
            round_handled = 0
            for source in self.queues:
                while polled := source.poll():
                    round_handled += polled
            if not round_handled:
                return handled
            handled += round_handled
        return handled

    def run_cycle(self, now: float | None = None) -> dict:
        report = self.tick(now)
        self.drain()
        return report

    def _scheduled_function(self) -> str:
        for logical_id in self.functions:
            events = self.stack.resources[logical_id]["Properties"].get("Events", {})
            if any(e["Type"] == "ScheduleV2" for e in events.values()):
                return logical_id
        raise LookupError("no function with a ScheduleV2 event in template.yaml")

    def cold_start(self, logical_id: str) -> Function:
        """Another execution environment of a function, as Lambda starts one when requests come
        in parallel: the same code and settings, its own memory (an api instance's own cache).
        The stack's queues and the HTTP bridge keep driving self.functions."""
        return load_function(self.stack, self.root, logical_id)

    def queue(self, logical_id: str) -> str:
        return self.stack.refs[logical_id]

    def close(self) -> None:
        stack_file = self.state / STACK_FILE
        if stack_file.exists():
            stack_file.unlink()
        self._moto.stop()


class _EndpointSession:
    """A boto3 session whose clients all talk to the local endpoint."""

    def __init__(self, session: boto3.Session, endpoint: str):
        self._session, self._endpoint = session, endpoint

    def client(self, service: str):
        return self._session.client(service, endpoint_url=self._endpoint)
