"""The mock analyzer (docs/design.md#analyzers): deterministic results derived from the input, after a
simulated latency, so the whole path runs with no model and no AWS account.

Its score counts framing markers in the headline and the text's opening (loaded words, words in
capitals, exclamation marks): a neutral headline scores 0, "SHOCKING: Minister SLAMS critics!"
scores 1. A neutral headline is kept; a marked one gives way to the text's first sentence
without markers. Its summary and facts are the text's first sentences without markers. Tokens
are counted as words."""

from __future__ import annotations

import re
import time

from starfeed.enrich.analysis import Analysis, AnalysisRequest, checked

# Stems of loaded words: "shock" marks shocking and shocked, "devastat" devastates and devastating.
LOADED = ("shock", "slam", "blast", "destroy", "outrag", "furious", "fury", "chaos", "chaotic", "disaster",
          "catastroph", "meltdown", "bombshell", "unbelievabl", "incredibl", "horrif", "terrif", "explosive",
          "brutal", "humiliat", "stunn", "devastat", "savage", "insane", "scandal", "expose", "slaughter")
WORD = re.compile(r"[\w'’-]+", re.UNICODE)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
MARKERS_FOR_FULL_SCORE = 4
OPENING = 400  # characters of the text read for markers, besides the headline


def loaded(word: str) -> bool:
    return word.lower().startswith(LOADED)


def markers(text: str) -> int:
    words = WORD.findall(text)
    loaded_words = sum(1 for w in words if loaded(w))
    shouted = sum(1 for w in words if len(w) >= 3 and w.isupper() and w.isalpha())
    return loaded_words + shouted + text.count("!")


TITLE_WORDS = 14


def neutral_title(title: str, plain: list[str]) -> str:
    """The headline when it has no marker; else the first plain sentence, as a headline."""
    if not markers(title) and title.strip():
        return " ".join(title.split())
    if plain:
        words = plain[0].rstrip(".").split()
        return " ".join(words[:TITLE_WORDS]) + ("…" if len(words) > TITLE_WORDS else "")
    kept = [w.lower() if w.isupper() else w for w in title.replace("!", " ").split() if not loaded(w.strip(":,."))]
    return " ".join(kept).strip(" :-–—,?") or "(untitled)"


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE.split(" ".join(text.split())) if s.strip()]


class MockAnalyzer:
    name = "mock"

    def __init__(self, latency_ms: int = 300, sleep=time.sleep):
        self.latency_ms, self._sleep = max(0, latency_ms), sleep

    def analyze(self, request: AnalysisRequest) -> Analysis:
        if self.latency_ms:
            self._sleep(self.latency_ms / 1000)
        headline = " ".join(request.title.split())
        text = " ".join(request.text.split())
        text = text[len(headline):] if headline and text.startswith(headline) else text  # the page's own <h1>
        plain = [s for s in sentences(text) if not markers(s)]
        facts = plain[:3]
        summary = " ".join(plain[:2]) or request.title
        score = min(1.0, markers(f"{request.title} {request.text[:OPENING]}") / MARKERS_FOR_FULL_SCORE)
        title = neutral_title(request.title, plain)
        tokens_in = len(WORD.findall(f"{request.prompt.text} {request.title} {request.text}"))
        tokens_out = len(WORD.findall(" ".join([title, summary, *facts])))
        # Held to the bounds a model's answer is held to: a page is hostile input here too.
        fields = checked({"title": title, "summary": summary, "facts": facts, "score": round(score, 2)})
        return Analysis(**fields, model="mock", tokens_in=tokens_in, tokens_out=tokens_out, latency_ms=self.latency_ms)
