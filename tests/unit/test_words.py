"""The project speaks for itself: no text in it cites the design documents starfeed was built
from or an issue number, which no reader of the repository can look up. A rule is named by what
it does, or cited by its anchor in docs/design.md, and every anchor cited exists."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ["README.md", "DEVELOPERS.md", "docs", "template.yaml", "Makefile", "functions", "layers", "tests"]
SKIPPED_DIRS = {".venv", "__pycache__", ".pytest_cache", ".hypothesis", "build", "dist"}
# Places that must keep such words; none so far.
ALLOWED: set[tuple[str, str]] = set()

CITATIONS = re.compile("|".join([
    r"\b[Ss]eeds? 0\d\d\b",  # a design document by number
    r"(?<![-\w])[Ss]eeds? \d{3}\b",  # ...or any three digits; a random seed is written `--seed N`
    r"\b[Ss]eeds?/",  # their folder
    r"seed_0\d\d",  # a test named after one
    "\u00a7",  # a section sign: standards are cited as "RFC 5005 section 3"
    r"\b[Ii]ssues? #?\d+",  # an issue number
]))
DESIGN_ANCHOR = re.compile(r"docs/design\.md#([\w-]+)")
PLACEHOLDER = "anchor"  # how docs/design.md names the convention itself


def text_files():
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for file in candidates:
            parts = set(file.relative_to(ROOT).parts)
            if not file.is_file() or parts & SKIPPED_DIRS or any(p.endswith(".egg-info") for p in parts):
                continue
            try:
                yield file.relative_to(ROOT).as_posix(), file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # not text


def citations(text: str) -> list[str]:
    return [m.group(0) for m in CITATIONS.finditer(text)]


def test_the_finder_finds_each_kind_of_citation():
    samples = ["as " + "seed" + " 003 says", "Seed" + " 004's filter", "seed" + "s 002 to 004",
               "see " + "seeds" + "/002.md", "def test_" + "seed" + "_002_scenarios", "\u00a7" + "4.6",
               "Issue" + " 7's goal", "issue" + " #12"]
    assert [bool(citations(sample)) for sample in samples] == [True] * len(samples)
    keep = ["--seed 202", "random.Random(seed)", "seed=1", "[--seed 1]", "RFC 5005 section 3",
            "the third star seeds the EMA", "docs/design.md#first-fetch"]
    assert [citations(sample) for sample in keep] == [[]] * len(keep)


def test_no_text_cites_a_design_document_or_an_issue():
    found = [f"{path}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
             for path, text in text_files() for m in CITATIONS.finditer(text)
             if (path, m.group(0)) not in ALLOWED]
    assert not found


def test_every_cited_design_anchor_exists():
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r'id="([\w-]+)"', design))
    anchors |= {re.sub(r"[^\w -]", "", heading.strip().lower()).replace(" ", "-")
                for heading in re.findall(r"^#+ (.+)$", design, re.M)}
    missing = sorted({f"{path}: #{anchor}" for path, text in text_files()
                      for anchor in DESIGN_ANCHOR.findall(text) if anchor not in anchors | {PLACEHOLDER}})
    assert not missing
