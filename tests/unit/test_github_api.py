"""GitHub responses read as docs/design.md#github and GitHub's documentation say: pure, no network."""

import json

import pytest
from requests.structures import CaseInsensitiveDict

from starfeed.fetch.github import classify
from starfeed.parse.github import BadBody, accounts_of, star_entry, stars_of
from starfeed.settings import Settings

NOW = 1_800_000_000.0
SETTINGS = Settings()


def verdict(status, headers=None, message=None):
    body = json.dumps({"message": message}).encode() if message else b""
    return classify(status, CaseInsensitiveDict(headers or {}), body, None, NOW, SETTINGS)  # as fetch keeps them


def test_success_and_not_modified():
    assert verdict(200).answer == "ok"
    assert verdict(304).answer == "not-modified"


def test_an_exhausted_primary_limit_waits_for_the_reset():
    for status in (403, 429):
        v = verdict(status, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 1234)},
                    "API rate limit exceeded for user ID 1.")
        assert (v.answer, v.until) == ("rate-limited", NOW + 1234)
        assert "rate limit exhausted" in v.reason


def test_a_secondary_limit_honours_retry_after_or_waits_at_least_60_seconds():
    v = verdict(403, {"Retry-After": "120", "X-RateLimit-Remaining": "4000"},
                "You have exceeded a secondary rate limit.")
    assert (v.answer, v.until) == ("rate-limited", NOW + 120)
    v = verdict(403, {}, "You have exceeded a secondary rate limit.")
    assert (v.answer, v.until) == ("rate-limited", NOW + 60)
    assert verdict(429).until == NOW + 60


def test_401_and_a_403_that_is_no_rate_limit_reject_the_token_with_an_actionable_reason():
    for status, message in ((401, "Bad credentials"), (403, "Resource not accessible by personal access token")):
        v = verdict(status, {"X-RateLimit-Remaining": "4999"}, message)
        assert v.answer == "rejected"
        assert v.reason.startswith(f"GitHub token rejected: {status} {message}")
        assert "starfeed github connect" in v.reason


def test_other_failures_are_this_call_only():
    assert verdict(404, message="Not Found").answer == "failed"
    assert classify(None, {}, b"", "could not connect: refused", NOW, SETTINGS).reason == \
        "GitHub: could not connect: refused"


STAR = {"starred_at": "2025-10-17T03:00:00Z",
        "repo": {"full_name": "rust-lang/rust", "html_url": "https://github.com/rust-lang/rust",
                 "description": "Empowering <b>everyone</b> & more", "language": "Rust", "stargazers_count": 98000}}


def test_bob_stars_rust_lang_rust():
    [star] = stars_of(json.dumps([STAR]).encode())
    entry = star_entry("bob", star, "src", NOW)
    assert entry.title == "bob starred rust-lang/rust"
    assert entry.canonical_link == "https://github.com/rust-lang/rust"
    assert entry.entry_uid == "github-star://bob/rust-lang/rust/2025-10-17T03:00:00Z"
    assert entry.published == "2025-10-17T03:00:00Z"
    # GitHub descriptions are plain text: kept as written, for each renderer to escape.
    assert entry.summary == "Empowering <b>everyone</b> & more · Language: Rust · Stars: 98,000"


def test_hostile_or_malformed_items_are_dropped_not_trusted():
    items = [STAR,
             {"starred_at": "yesterday", "repo": STAR["repo"]},
             {"starred_at": "2025-10-17T03:00:00Z", "repo": {"full_name": "../../etc/passwd"}},
             {"starred_at": "2025-10-17T03:00:00Z",
              "repo": {"full_name": "a/b", "html_url": "javascript:alert(1)", "stargazers_count": True}},
             "not an object", None]
    stars = stars_of(json.dumps(items).encode())
    assert [s.repo_full_name for s in stars] == ["rust-lang/rust", "a/b"]
    assert stars[1].html_url == "https://github.com/a/b" and stars[1].stargazers_count is None
    assert [a.login for a in accounts_of(json.dumps(
        [{"login": "ok-user", "id": 1}, {"login": "<script>", "id": 2}, {"login": "noid"}]).encode())] == ["ok-user"]
    with pytest.raises(BadBody):
        stars_of(b"<html>")
    with pytest.raises(BadBody):
        accounts_of(b'{"message": "not a list"}')
