"""The analyzers (docs/design.md#analyzers): the mock's deterministic results, and Bedrock's Converse API through
boto3 against a loopback server speaking its wire format (a throttled call retried, a malformed
answer refused)."""

import pytest

from starfeed.enrich.analysis import AnalysisRequest, AnalyzerError, default_prompt, prompt_for
from starfeed.enrich.bedrock import BedrockAnalyzer
from starfeed.enrich.mock import MockAnalyzer

from converse import THROTTLED, ConverseServer, text_answer, tool_answer

ARTICLE = ("The city council approved the budget on Tuesday by seven votes to two. "
           "It raises spending on schools by 4 percent. The mayor said the plan was fair.")


def request(title="Council approves budget", text=ARTICLE, used="article"):
    return AnalysisRequest(title, text, "https://news.example/budget", default_prompt(), used)


@pytest.fixture
def bedrock(monkeypatch):
    server = ConverseServer()
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    for name, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test")):
        monkeypatch.setenv(name, value)
    yield server
    server.close()


def test_the_mock_is_deterministic_and_scores_framing():
    slept = []
    mock = MockAnalyzer(latency_ms=300, sleep=slept.append)
    neutral = mock.analyze(request())
    assert neutral == mock.analyze(request())  # the same input, the same result
    assert slept == [0.3, 0.3]  # the simulated latency, each call
    assert neutral.score == 0 and neutral.title == "Council approves budget" and neutral.model == "mock"
    assert neutral.summary.startswith("The city council approved the budget on Tuesday")
    assert neutral.facts[0] == "The city council approved the budget on Tuesday by seven votes to two."
    assert neutral.tokens_in > neutral.tokens_out > 0 and neutral.latency_ms == 300
    loud = mock.analyze(request("SHOCKING: Council SLAMS critics in budget chaos!"))
    assert loud.score == 1.0
    # A marked headline gives way to the text's first plain sentence.
    assert loud.title == "The city council approved the budget on Tuesday by seven votes to two"
    page = mock.analyze(request("SHOCKING!", "SHOCKING! It rained. It RAINED A LOT!"))
    assert page.title == "It rained" and page.summary == "It rained." and page.facts == ["It rained."]
    bare = mock.analyze(request("Critics SLAM the DEVASTATING plan!", ""))
    assert bare.title == "Critics the plan" and bare.summary == "Critics SLAM the DEVASTATING plan!"
    mild = mock.analyze(request("Council slams critics over budget"))
    assert 0 < mild.score < 0.5


def test_the_mock_holds_a_hostile_page_to_the_stored_bounds():
    endless = "word" * 5000 + ". " + "Another sentence. " * 40
    result = MockAnalyzer(0).analyze(request("SHOCKING!", endless))
    assert len(result.title) <= 300 and len(result.summary) <= 2000 and len(result.facts) <= 12


def test_the_result_records_its_prompt_and_its_input():
    result = MockAnalyzer(0).analyze(request(used="feed")).result(request(used="feed"), "2026-11-26T00:00:00Z")
    stored = result.to_dict()
    assert stored["prompt_version"] == default_prompt().version and stored["prompt_version"].startswith("default:")
    assert stored["input"] == "feed" and stored["analyzed_at"] == "2026-11-26T00:00:00Z"
    assert set(stored) == {"title", "summary", "facts", "score", "model", "tokens_in", "tokens_out",
                           "latency_ms", "prompt_version", "input", "download_error", "analyzed_at"}
    own = prompt_for("Be terse.")
    assert own.version.startswith("source:") and own.version != prompt_for("Be terser.").version
    assert prompt_for(None) == prompt_for("  ") == default_prompt()


def test_bedrock_sends_the_prompt_the_item_and_the_tool_and_reads_the_tool_call(bedrock):
    bedrock.replies.append((200, tool_answer({"title": "Council passes budget", "summary": "It passed 7-2.",
                                              "facts": ["The vote was 7-2.", "School spending rises 4%."],
                                              "score": 0.35}), None))
    analysis = BedrockAnalyzer("amazon.nova-lite-v1:0", "us-east-1").analyze(request())
    assert (analysis.title, analysis.score, analysis.facts) == (
        "Council passes budget", 0.35, ["The vote was 7-2.", "School spending rises 4%."])
    assert (analysis.model, analysis.tokens_in, analysis.tokens_out, analysis.latency_ms) == (
        "amazon.nova-lite-v1:0", 812, 97, 640)
    model, headers, body = bedrock.requests[0]
    assert model == "amazon.nova-lite-v1:0"
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256")
    assert "/bedrock/aws4_request" in headers["authorization"]
    assert body["system"] == [{"text": default_prompt().text}]
    assert "Council approves budget" in body["messages"][0]["content"][0]["text"]
    assert ARTICLE in body["messages"][0]["content"][0]["text"]
    tool = body["toolConfig"]["tools"][0]["toolSpec"]
    assert tool["name"] == "record_analysis"
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": "record_analysis"}}
    assert tool["inputSchema"]["json"]["required"] == ["title", "summary", "facts", "score"]


def test_bedrock_retries_throttling_with_backoff(bedrock):
    bedrock.replies += [THROTTLED, THROTTLED]
    analysis = BedrockAnalyzer("amazon.nova-lite-v1:0", "us-east-1").analyze(request())
    assert analysis.title == "Neutral title"
    assert len(bedrock.requests) == 3  # two throttled, then answered


def test_bedrock_gives_up_on_throttling_after_its_attempts(bedrock):
    bedrock.replies += [THROTTLED] * 3
    with pytest.raises(AnalyzerError, match="ThrottlingException"):
        BedrockAnalyzer("amazon.nova-lite-v1:0", "us-east-1", attempts=2).analyze(request())
    assert len(bedrock.requests) == 2


@pytest.mark.parametrize("answer, reason", [
    (text_answer("I think the article is fine."), "answered without calling record_analysis"),
    (tool_answer({"title": "T", "summary": "S", "facts": ["F"]}), "lacks score"),
    (tool_answer({"title": "T", "summary": "S", "facts": ["F"], "score": 7}), "not a number from 0 to 1"),
    (tool_answer({"title": "T", "summary": "S", "facts": "one fact", "score": 0.1}), "not a list of statements"),
    (tool_answer({"title": " ", "summary": "S", "facts": [], "score": 0.1}), "title is empty"),
    (tool_answer(["not", "an", "object"]), "not an object"),
])
def test_a_malformed_model_answer_is_refused_with_its_reason(bedrock, answer, reason):
    bedrock.replies.append((200, answer, None))
    with pytest.raises(AnalyzerError, match=reason):
        BedrockAnalyzer("amazon.nova-lite-v1:0", "us-east-1").analyze(request())


def test_bedrock_clips_what_the_model_wrote_to_the_stored_bounds(bedrock):
    bedrock.replies.append((200, tool_answer({"title": "T " * 400, "summary": "S", "facts": ["f"] * 40,
                                              "score": 0.123456}), None))
    analysis = BedrockAnalyzer("amazon.nova-lite-v1:0", "us-east-1").analyze(request())
    assert len(analysis.title) <= 300 and len(analysis.facts) == 12 and analysis.score == 0.123


def test_an_answer_that_is_not_converses_format_is_refused_with_its_reason(bedrock):
    bedrock.replies.append((200, "not json at all", None))
    with pytest.raises(AnalyzerError, match="answered without calling record_analysis"):
        BedrockAnalyzer("amazon.nova-lite-v1:0", "us-east-1").analyze(request())
    answer = tool_answer({"title": "T", "summary": "S", "facts": [], "score": 0.1})
    answer["usage"] = {"inputTokens": "many", "outputTokens": 3}
    bedrock.replies.append((200, answer, None))
    with pytest.raises(AnalyzerError, match="not Converse's format"):
        BedrockAnalyzer("amazon.nova-lite-v1:0", "us-east-1").analyze(request())
