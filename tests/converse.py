"""A loopback server speaking Amazon Bedrock's Converse wire format (POST /model/{id}/converse,
JSON in and out, errors named by the x-amzn-ErrorType header), standing in for Bedrock: boto3
reaches it through AWS_ENDPOINT_URL_BEDROCK_RUNTIME, as it would reach any endpoint."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from starfeed.local.loopback import Loopback, reply


def tool_answer(arguments: dict, tokens_in: int = 812, tokens_out: int = 97, latency_ms: int = 640) -> dict:
    """Converse's answer when the model calls the record_analysis tool with these arguments."""
    return {"output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_1", "name": "record_analysis", "input": arguments}}]}},
            "stopReason": "tool_use",
            "usage": {"inputTokens": tokens_in, "outputTokens": tokens_out, "totalTokens": tokens_in + tokens_out},
            "metrics": {"latencyMs": latency_ms}}


def text_answer(text: str) -> dict:
    """A model that talks instead of calling the tool."""
    return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}}, "stopReason": "end_turn",
            "usage": {"inputTokens": 700, "outputTokens": 20, "totalTokens": 720}, "metrics": {"latencyMs": 300}}


THROTTLED = (429, {"message": "Too many requests, please wait before trying again."}, "ThrottlingException")


class ConverseServer:
    def __init__(self):
        # (status, body, error type), in turn; a body that is a str is sent as it is
        self.replies: list[tuple[int, dict | str, str | None]] = []
        self.default = (200, tool_answer({"title": "Neutral title", "summary": "What happened.",
                                          "facts": ["A fact."], "score": 0.2}), None)
        self.requests: list[tuple[str, dict, dict]] = []  # (model id, headers, body)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                parts = self.path.split("/")
                is_converse = len(parts) == 4 and parts[1] == "model" and parts[3] == "converse"
                model = unquote(parts[2]) if is_converse else None
                server.requests.append((model, {k.lower(): v for k, v in self.headers.items()}, body))
                if model is None:
                    status, answer, error = 404, {"message": f"no route {self.path}"}, "UnknownOperationException"
                else:
                    status, answer, error = server.replies.pop(0) if server.replies else server.default
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                reply(self, status, data, "application/json",
                      {"x-amzn-ErrorType": error} if error else {})

            def log_message(self, *args):
                pass

        self._server = Loopback(Handler)
        self.url = self._server.url

    def close(self):
        self._server.close()
