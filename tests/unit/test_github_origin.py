"""The GitHub token goes to the configured API origin (scheme, host, port) only.

Two real servers on loopback: the API, and another origin on the same host (another port) that
records whatever reaches it."""

from __future__ import annotations

import json

from starfeed.fetch.github import GitHub, read_following, read_stars
from starfeed.settings import Settings

from origin import Origin, Reply

TOKEN = "ghp_test_token"
FOLLOWING = "/user/following?per_page=100"


def client(api: Origin) -> GitHub:
    settings = Settings(github_api_url=api.url, allow_private_networks="127.0.0.1/32", retry_backoff=0.01,
                        connect_timeout=2, read_timeout=2, fetch_deadline=5)
    return GitHub(settings, lambda force: TOKEN)


def users(*logins: str) -> bytes:
    return json.dumps([{"login": login, "id": n + 1} for n, login in enumerate(logins)]).encode()


def test_a_next_link_to_another_origin_is_not_followed_and_says_why(origin, other_origin):
    origin.serve(FOLLOWING, Reply(200, users("a"), {"Link": f'<{other_origin.url}/user/following?page=2>; rel="next"'}))
    other_origin.serve("/user/following?page=2", Reply(200, users("b")))
    read = read_following(client(origin))
    assert (read.verdict.answer, read.verdict.reason) == (
        "failed", f'GitHub: Link rel="next" points at another origin ({other_origin.url}); not followed, '
                  f"the token stays with {origin.url}")
    assert origin.hits(FOLLOWING)[0]["authorization"] == f"Bearer {TOKEN}"
    assert other_origin.requests == []
    assert read.accounts == []  # a partial follow list would unfollow the rest


def test_a_next_link_on_another_scheme_or_a_stars_read_stops_the_same_way(origin, other_origin):
    https = origin.url.replace("http://", "https://")
    origin.serve("/users/bob/starred?per_page=100",
                 Reply(200, b"[]", {"Link": f'<{https}/users/bob/starred?page=2>; rel="next"'}))
    read = read_stars(client(origin), "bob", None, None, lambda uids: set(), first_sync=True, now=0)
    assert read.verdict.answer == "failed" and f"({https})" in read.verdict.reason
    assert len(origin.requests) == 1


def test_a_next_link_on_the_same_origin_is_followed_even_when_relative(origin):
    origin.serve(FOLLOWING, Reply(200, users("a"), {"Link": '</user/1/following?page=2>; rel="next"'}))
    origin.serve("/user/1/following?page=2", Reply(200, users("b")))
    read = read_following(client(origin))
    assert read.verdict.answer == "ok" and [a.login for a in read.accounts] == ["a", "b"]
    assert origin.hits("/user/1/following?page=2")[0]["authorization"] == f"Bearer {TOKEN}"


def test_get_refuses_to_send_the_token_to_another_origin(origin, other_origin):
    page = client(origin).get(other_origin.url + "/user")
    assert (page.verdict.answer, page.result.status) == ("failed", None)
    assert page.verdict.reason == f"GitHub: the token is not sent to {other_origin.url}; it stays with {origin.url}"
    assert other_origin.requests == []


def test_a_redirect_off_the_api_origin_arrives_without_the_token(origin, other_origin):
    origin.serve(FOLLOWING, Reply(302, headers={"Location": other_origin.url + "/elsewhere"}))
    other_origin.serve("/elsewhere", Reply(200, users("a")))
    client(origin).get(client(origin).url("/user/following", per_page=100))
    assert origin.hits(FOLLOWING)[0]["authorization"] == f"Bearer {TOKEN}"
    assert "authorization" not in other_origin.hits("/elsewhere")[0]
