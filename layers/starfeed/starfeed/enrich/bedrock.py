"""Amazon Bedrock's Converse API as an analyzer (docs/design.md#analyzers). Structured output comes through one tool
whose input schema is the AnalyzerResult's content; the model is made to call it.

The client is boto3's bedrock-runtime with no endpoint of ours: boto3's own settings decide it
(AWS_ENDPOINT_URL_BEDROCK_RUNTIME, then AWS_ENDPOINT_URL), so tests point it at a loopback server
speaking Converse's wire format. Throttling and other transient errors are retried by botocore's
standard retry mode, with exponential backoff and jitter."""

from __future__ import annotations

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from starfeed.enrich.analysis import RESULT_SCHEMA, TOOL_NAME, Analysis, AnalysisRequest, AnalyzerError, checked

MAX_OUTPUT_TOKENS = 1024


def converse_request(model_id: str, request: AnalysisRequest) -> dict:
    """Converse's parameters for one analysis: the prompt as the system message, the item as the
    user's, and the one tool the model must call."""
    item = f"Headline: {request.title}\n\n{'Article' if request.used == 'article' else 'Feed excerpt'}:\n{request.text}"
    return {
        "modelId": model_id,
        "system": [{"text": request.prompt.text}],
        "messages": [{"role": "user", "content": [{"text": item}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": TOOL_NAME, "description": "Record the deframed analysis.",
                                               "inputSchema": {"json": RESULT_SCHEMA}}}],
                       "toolChoice": {"tool": {"name": TOOL_NAME}}},
        "inferenceConfig": {"maxTokens": MAX_OUTPUT_TOKENS, "temperature": 0},
    }


def analysis_of(response: dict, model_id: str) -> Analysis:
    """The tool call in Converse's answer, checked; AnalyzerError when there is none or it is malformed."""
    content = ((response.get("output") or {}).get("message") or {}).get("content") or []
    calls = [c["toolUse"] for c in content if isinstance(c, dict) and isinstance(c.get("toolUse"), dict)
             and c["toolUse"].get("name") == TOOL_NAME]
    usage, metrics = response.get("usage") or {}, response.get("metrics") or {}
    # botocore has read them as the numbers Converse's model says they are.
    tokens_in, tokens_out = int(usage.get("inputTokens") or 0), int(usage.get("outputTokens") or 0)
    latency = int(metrics.get("latencyMs") or 0)
    tokens = tokens_in + tokens_out
    if not calls:
        raise AnalyzerError(f"{model_id} answered without calling {TOOL_NAME} "
                            f"(stop reason {response.get('stopReason')!r})", tokens)
    try:
        fields = checked(calls[0].get("input"))
    except AnalyzerError as exc:
        raise AnalyzerError(str(exc), tokens) from None
    return Analysis(**fields, model=model_id, tokens_in=tokens_in, tokens_out=tokens_out, latency_ms=latency)


class BedrockAnalyzer:
    name = "bedrock"

    def __init__(self, model_id: str, region: str, attempts: int = 5, client=None):
        self.model_id = model_id
        self._client = client or boto3.client(
            "bedrock-runtime", region_name=region,
            config=Config(retries={"mode": "standard", "total_max_attempts": attempts},
                          connect_timeout=5, read_timeout=60))

    def analyze(self, request: AnalysisRequest) -> Analysis:
        try:
            response = self._client.converse(**converse_request(self.model_id, request))
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise AnalyzerError(f"Bedrock {error.get('Code', 'error')}: {error.get('Message', exc)}") from exc
        except BotoCoreError as exc:
            raise AnalyzerError(f"Bedrock unreachable: {exc}") from exc
        except (ResponseParserError, ValueError, TypeError) as exc:  # botocore reading a malformed answer
            raise AnalyzerError(f"Bedrock's answer is not Converse's format: {str(exc)[:200]}") from exc
        return analysis_of(response, self.model_id)
