"""The mock analyzer (seed 004 §5): deterministic results derived from the input, after a
simulated latency, so the whole path runs with no model and no AWS account.

Its score counts framing markers in the headline and the text's opening (loaded words, words in
capitals, exclamation marks): a neutral headline scores 0, "SHOCKING: Minister SLAMS critics!"
scores 1. Its title is the headline without them; its summary and facts are the text's first
sentences. Tokens are counted as words."""

from __future__ import annotations

import re
import time

from starfeed.enrich.analysis import Analysis, AnalysisRequest

LOADED = frozenset("""shocking shock slams slammed blasts blasted destroys destroyed outrage outraged furious
chaos disaster meltdown bombshell unbelievable incredible horrifying terrifying explosive brutal humiliating
humiliated stunning stunned devastating savage epic insane crisis scandal exposed exposes""".split())
WORD = re.compile(r"[\w'’-]+", re.UNICODE)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
MARKERS_FOR_FULL_SCORE = 4
OPENING = 400  # characters of the text read for markers, besides the headline


def markers(text: str) -> int:
    words = WORD.findall(text)
    loaded = sum(1 for w in words if w.lower() in LOADED)
    shouted = sum(1 for w in words if len(w) >= 3 and w.isupper() and w.isalpha())
    return loaded + shouted + text.count("!")


def neutral_title(title: str) -> str:
    kept = [w for w in title.replace("!", " ").split() if w.strip(":,.").lower() not in LOADED]
    words = [w.capitalize() if len(w) >= 3 and w.isupper() and w.isalpha() else w for w in kept]
    return " ".join(words).strip(" :-–—,?") or title.strip() or "(untitled)"


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE.split(" ".join(text.split())) if s.strip()]


class MockAnalyzer:
    name = "mock"

    def __init__(self, latency_ms: int = 300, sleep=time.sleep):
        self.latency_ms, self._sleep = max(0, latency_ms), sleep

    def analyze(self, request: AnalysisRequest) -> Analysis:
        if self.latency_ms:
            self._sleep(self.latency_ms / 1000)
        said = sentences(request.text)
        facts = [s for s in said if not markers(s)][:3]
        summary = " ".join(said[:2]) or request.title
        score = min(1.0, markers(f"{request.title} {request.text[:OPENING]}") / MARKERS_FOR_FULL_SCORE)
        title = neutral_title(request.title)
        tokens_in = len(WORD.findall(f"{request.prompt.text} {request.title} {request.text}"))
        tokens_out = len(WORD.findall(" ".join([title, summary, *facts])))
        return Analysis(title, summary, facts, round(score, 2), "mock", tokens_in, tokens_out, self.latency_ms)
