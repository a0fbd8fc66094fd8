"""How analyzed entries are shown (docs/design.md#deframed-items), and max_score (docs/design.md#max-score). Pure.

A deframed source's item carries the deframed title and the neutral summary; its link stays the
article's, and the original headline and the framing score are kept in its content."""

from __future__ import annotations

import html
from dataclasses import replace

from starfeed.enrich.analysis import score_of
from starfeed.model import Entry


def deframed(entry: Entry) -> Entry:
    """The entry as a deframed feed shows it; unchanged when it has no usable result."""
    result = entry.analyzer_result
    if not isinstance(result, dict) or not isinstance(result.get("title"), str) or not result["title"].strip():
        return entry
    summary = result.get("summary") if isinstance(result.get("summary"), str) else ""
    facts = [f for f in result.get("facts") or [] if isinstance(f, str)]
    score = score_of(result)
    original = html.escape(entry.title or "")
    parts = [f"<p>{html.escape(summary)}</p>" if summary else ""]
    if facts:
        parts.append("<ul>" + "".join(f"<li>{html.escape(f)}</li>" for f in facts) + "</ul>")
    notes = [f"Original headline: {original}" if original else "",
             f"framing score {score:.2f}" if score is not None else ""]
    if any(notes):
        parts.append("<p><small>" + "; ".join(n for n in notes if n) + "</small></p>")
    return replace(entry, title=result["title"], summary=summary or entry.summary, content="".join(parts))


def within(entries: list[Entry], max_score: float | None) -> list[Entry]:
    """max_score (docs/design.md#max-score): with a threshold, only analyzed entries scoring at most it (one not
    analyzed yet is held back until it is); without one, every entry."""
    if max_score is None:
        return entries
    return [e for e in entries if (score := score_of(e.analyzer_result)) is not None and score <= max_score]


def threshold(value: str | None) -> float | None:
    """A max_score query parameter: None when absent; ValueError with the reason when unusable.
    Rounded to three decimals, as scores are stored, so 0.5 and 0.500 are one threshold (and one
    cached response)."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"max_score={value[:40]!r} is not a number from 0 to 1") from None
    if not 0 <= number <= 1:
        raise ValueError(f"max_score={value[:40]!r} is not a number from 0 to 1")
    return round(number, 3)
