"""Request options on the local stack (docs/design.md#request-options): feeds readable only with a
cookie, only with a header, only through a proxy, subscribed through the CLI and fetched by the
fetcher; their secrets reach their own origin and nothing else, and appear in no output."""

import base64
import json
import logging
import time
import uuid
from dataclasses import replace

import pytest

from starfeed.local import snapshot

from conftest import api_call, body_of, http_get, run_cli
from origin import Reply, rss
from proxies import EGRESS, HttpProxy, Socks5Proxy


def _secret(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex}"


def _id(out: str) -> str:
    """The id `source add` printed: `added ID URL`."""
    return next(line.split()[1] for line in out.splitlines() if line.startswith("added "))


def _due(storage, source_id: str) -> None:
    storage.sources.change(source_id, {"next_check_at": time.time() - 1, "locked_until": None})


def everything_shown(stack, storage, capsys, source_ids: list[str]) -> str:
    """Every output a secret must stay out of: the CLI's views, the REST API, the raw records of
    the sources' fetches, their stored items as DynamoDB holds them, and the local state file."""
    shown = []
    for argv in (["source", "list"], ["source", "list", "--json"], ["source", "list", "--wide"],
                 *(["source", "show", i] for i in source_ids)):
        code, out, err = run_cli(capsys, *argv)
        assert code == 0, err
        shown += [out, err]
    for path in ("/api/v1/feeds", *(f"/api/v1/feeds/{i}" for i in source_ids)):
        answer = api_call(stack, "GET", path)
        assert answer["statusCode"] == 200
        shown.append(answer["body"])
    s3 = storage.client("s3")
    for source_id in source_ids:
        for fetched in storage.sources.get(source_id).fetch_history:
            key = f"fetches/{fetched['fetch_id']}.raw"
            shown.append(s3.get_object(Bucket=storage.settings.raw_bucket, Key=key)["Body"].read().decode("latin-1"))
        item = storage.client("dynamodb").get_item(TableName=storage.settings.sources_table,
                                                   Key={"source_id": {"S": source_id}})["Item"]
        shown.append(json.dumps(item))
    shown.append(json.dumps(snapshot.capture(stack.stack), default=str))
    return "\n".join(shown)


def test_feeds_readable_only_with_a_cookie_or_a_header(stack, storage, origin, capsys, caplog):
    caplog.set_level(logging.DEBUG, logger="starfeed")
    cookie, key, bearer = _secret("cookie"), _secret("key"), _secret("bearer")
    cookie_url = origin.serve("/members.xml", Reply(200, rss(("m1", "For members"), ("m2", "Also"))),
                              requires={"cookie": f"session={cookie}"})
    header_url = origin.serve("/api.xml", Reply(200, rss(("a1", "For keys"))),
                              requires={"x-api-key": key, "authorization": f"Bearer {bearer}"})

    # Without them, the check refuses the subscription with the site's answer.
    code, out, err = run_cli(capsys, "source", "add", cookie_url)
    assert code == 1 and "needs credentials" in err and "403" in err
    code, out, err = run_cli(capsys, "source", "add", cookie_url, "--cookie", f"session={cookie}", "--backfill", "5",
                             "--user-agent", "Mozilla/5.0 (starfeed test)")
    assert code == 0, err
    assert "asked with: user agent 'Mozilla/5.0 (starfeed test)'; cookies session" in out
    with_cookie = _id(out)
    code, out, err = run_cli(capsys, "source", "add", header_url, "--header", f"X-Api-Key: {key}",
                             "--header", f"Authorization: Bearer {bearer}", "--header", "Accept-Language: fr",
                             "--backfill", "5")
    assert code == 0, err
    with_header = _id(out)
    checks = len(origin.hits("/members.xml")), len(origin.hits("/api.xml"))

    stack.run_cycle()
    # One request each for the check and one for the first fetch; the refused check's one more.
    assert (len(origin.hits("/members.xml")), len(origin.hits("/api.xml"))) == (checks[0] + 1, checks[1] + 1)
    assert origin.hits("/members.xml")[-1]["cookie"] == f"session={cookie}"
    assert origin.hits("/members.xml")[-1]["user-agent"] == "Mozilla/5.0 (starfeed test)"
    sent = origin.hits("/api.xml")[-1]
    assert (sent["x-api-key"], sent["authorization"], sent["accept-language"]) == (key, f"Bearer {bearer}", "fr")
    for source_id, entries in ((with_cookie, 2), (with_header, 1)):
        source = storage.sources.get(source_id)
        assert (source.status, source.entry_count) == ("ok", entries), source.last_error

    code, out, _ = run_cli(capsys, "source", "list")
    assert "asked with their own request options, or through a proxy:" in out
    assert f"{with_header}  headers Accept-Language, X-Api-Key, Authorization" in out
    code, out, _ = run_cli(capsys, "source", "list", "--json")
    listed = {s["source_id"]: s for s in json.loads(out)}
    assert listed[with_cookie]["request"]["cookies"] == {"session": "(redacted)"}
    assert listed[with_header]["request"]["headers"] == {"Accept-Language": "fr", "X-Api-Key": "(redacted)",
                                                         "Authorization": "(redacted)"}
    feed = json.loads(api_call(stack, "GET", f"/api/v1/feeds/{with_header}")["body"])
    assert feed["request"]["headers"]["X-Api-Key"] == "(redacted)" and feed["proxy"] is None

    shown = everything_shown(stack, storage, capsys, [with_cookie, with_header]) + caplog.text
    for secret in (cookie, key, bearer):
        assert secret not in shown

    # Changed later: the new value is sent, the old one's parameter is gone.
    new_key = _secret("key")
    origin.required["/api.xml"] = ({"x-api-key": new_key}, None)
    code, out, err = run_cli(capsys, "source", "set", with_header, "--header", f"X-Api-Key: {new_key}")
    assert code == 0, err
    assert origin.hits("/api.xml")[-1]["x-api-key"] == new_key and "authorization" not in origin.hits("/api.xml")[-1]
    _due(storage, with_header)
    stack.run_cycle()
    assert storage.sources.get(with_header).status in ("ok", "not-modified")
    assert new_key not in everything_shown(stack, storage, capsys, [with_header]) + caplog.text


def _with_login(url: str, user: str, password: str) -> str:
    return url.replace("://", f"://{user}:{password}@", 1)


def test_a_urls_login_is_kept_as_a_secret_and_sent_to_its_origin_alone(stack, storage, origin, capsys, caplog,
                                                                       tmp_path):
    """user:password@ in a feed's URL, given to `source add`, `inspect`, an OPML import and the REST
    API: taken off the URL into the token store, sent as Basic credentials, shown nowhere."""
    caplog.set_level(logging.DEBUG, logger="starfeed")
    password = _secret("password")
    basic = "Basic " + base64.b64encode(f"ada:{password}".encode()).decode()
    urls = {name: origin.serve(f"/{name}.xml", Reply(200, rss((f"{name}1", f"Only for Ada ({name})"))),
                               requires={"authorization": basic}) for name in ("cli", "opml", "rest")}
    code, out, err = run_cli(capsys, "inspect", _with_login(urls["cli"], "ada", password))
    assert code == 0, err
    assert password not in out + err and "asked:    with headers Authorization" in err
    code, out, err = run_cli(capsys, "source", "add", _with_login(urls["cli"], "ada", password), "--backfill", "1")
    assert code == 0, err
    assert f"added {_id(out)} {urls['cli']}\n" in out and "asked with: headers Authorization" in out
    opml = tmp_path / "with-login.opml"
    opml.write_text(f'<opml version="2.0"><body><outline text="Ada" type="rss" '
                    f'xmlUrl="{_with_login(urls["opml"], "ada", password)}"/></body></opml>')
    code, imported, err = run_cli(capsys, "opml", "import", str(opml), "--backfill", "1")
    assert code == 0 and "1 added" in imported, imported + err
    answer = api_call(stack, "POST", "/api/v1/feeds", {"url": _with_login(urls["rest"], "ada", password),
                                                       "backfill": 1})
    assert answer["statusCode"] == 201, answer["body"]
    by_url = {s.url: s for s in storage.sources.all()}
    assert set(by_url) == set(urls.values())  # every URL kept without its login
    ids = [s.source_id for s in by_url.values()]
    for source_id in ids:
        _due(storage, source_id)
    stack.run_cycle()
    for name, url in urls.items():
        source = by_url[url]
        assert storage.sources.get(source.source_id).entry_count == 1, storage.sources.get(source.source_id).last_error
        assert origin.hits(f"/{name}.xml")[-1]["authorization"] == basic
        assert source.request.secret_headers == ["Authorization"]
    rendered = "\n".join(body_of(http_get(stack, path)) for path in ("/subscriptions.opml", "/feed.xml", "/feed", "/"))
    assert all(url in rendered for url in urls.values())
    shown = everything_shown(stack, storage, capsys, ids) + out + imported + answer["body"] + caplog.text + rendered
    assert password not in shown and basic.split()[1] not in shown


def test_a_pages_credentials_do_not_go_to_the_feed_it_announces_on_another_site(stack, origin, other_origin,
                                                                                  capsys):
    password = _secret("password")
    feed = other_origin.serve("/elsewhere.xml", Reply(200, rss(("e1", "Elsewhere"))))
    page = origin.serve("/", Reply(200, f'<html><head><link rel="alternate" type="application/rss+xml" '
                                        f'href="{feed}"></head></html>'.encode(), {"Content-Type": "text/html"}))
    code, out, err = run_cli(capsys, "source", "add", _with_login(page, "ada", password))
    assert code == 1 and "on another site" in err and password not in out + err
    assert other_origin.hits("/elsewhere.xml") == []


def test_a_redirect_to_another_origin_receives_none_of_the_secrets(stack, storage, origin, other_origin, capsys):
    cookie, token = _secret("cookie"), _secret("token")
    target = other_origin.serve("/moved.xml", Reply(200, rss(("r1", "Moved"))))
    url = origin.serve("/old.xml", Reply(302, headers={"Location": target}))
    code, out, err = run_cli(capsys, "source", "add", url, "--cookie", f"sid={cookie}",
                             "--header", f"X-Auth-Token: {token}", "--header", "X-Plain: yes", "--backfill", "1")
    assert code == 0, err
    source_id = _id(out)
    stack.run_cycle()
    assert storage.sources.get(source_id).entry_count == 1
    assert origin.hits("/old.xml")[-1]["cookie"] == f"sid={cookie}"
    hits = other_origin.hits("/moved.xml")
    assert len(hits) == 2  # the check, the first fetch
    for hit in hits:
        assert "cookie" not in hit and "x-auth-token" not in hit and hit["x-plain"] == "yes"


def test_a_source_with_secrets_does_not_move_to_another_origin(stack, storage, origin, other_origin, capsys):
    cookie = _secret("cookie")
    target = other_origin.serve("/new-home.xml", Reply(200, rss(("n1", "New home"))))
    url = origin.serve("/old-home.xml", Reply(301, headers={"Location": target}))
    code, out, err = run_cli(capsys, "source", "add", url, "--cookie", f"sid={cookie}", "--backfill", "1")
    assert code == 0, err
    source_id = _id(out)
    for _ in range(storage.settings.redirect_persistence + 1):
        _due(storage, source_id)
        stack.run_cycle()
    assert storage.sources.get(source_id).url == url  # its cookie stays with its origin
    assert all("cookie" not in hit for hit in other_origin.hits("/new-home.xml"))
    assert origin.hits("/old-home.xml")[-1]["cookie"] == f"sid={cookie}"


@pytest.fixture
def proxies():
    made = []

    def make(kind, credentials=None):
        made.append(kind(credentials))
        return made[-1]

    yield make
    for proxy in made:
        proxy.close()


def test_a_feed_reachable_only_through_a_proxy_named_for_it(stack, storage, origin, capsys, caplog, proxies):
    caplog.set_level(logging.DEBUG, logger="starfeed")
    password = _secret("password")
    proxy = proxies(HttpProxy, ("ada", password))
    url = origin.serve("/proxied.xml", Reply(200, rss(("p1", "Proxied"))), client=EGRESS)
    code, out, err = run_cli(capsys, "inspect", url)
    assert code == 1 and "403" in err  # not through the proxy: refused
    code, out, err = run_cli(capsys, "inspect", url, "--proxy", proxy.url(("ada", password)))
    assert code == 0, err
    assert f"through proxy http://127.0.0.1:{proxy.port}" in err
    code, out, err = run_cli(capsys, "source", "add", url, "--proxy", proxy.url(("ada", password)), "--backfill", "1")
    assert code == 0, err
    source_id = _id(out)
    stack.run_cycle()
    assert storage.sources.get(source_id).entry_count == 1
    assert [client for path, client in origin.clients if path == "/proxied.xml"][-3:] == [EGRESS] * 3
    code, out, _ = run_cli(capsys, "source", "list")
    assert f"{source_id}  through proxy http://127.0.0.1:{proxy.port}" in out
    assert json.loads(api_call(stack, "GET", f"/api/v1/feeds/{source_id}")["body"])["proxy"] == \
        f"http://127.0.0.1:{proxy.port}"
    assert password not in everything_shown(stack, storage, capsys, [source_id]) + caplog.text

    # --no-proxy: straight to the origin, which refuses it.
    code, out, err = run_cli(capsys, "source", "set", source_id, "--no-proxy")
    assert code == 1 and "403" in err and "stay as they were" in err
    code, out, err = run_cli(capsys, "source", "set", source_id, "--no-proxy", "--no-check")
    assert code == 0, err
    assert storage.sources.get(source_id).request is None


def test_a_feed_reachable_only_through_starfeed_proxy(stack, storage, origin, capsys, monkeypatch, proxies):
    proxy = proxies(Socks5Proxy)
    global_proxy = proxy.url().replace("socks5://", "socks5h://")
    monkeypatch.setenv("STARFEED_PROXY", global_proxy)  # the CLI's (tests run it with the stack's environment)
    fetcher = stack.functions["FetcherFunction"].module.storage
    monkeypatch.setattr(fetcher, "settings", replace(fetcher.settings, proxy=global_proxy))
    url = origin.serve("/everything-proxied.xml", Reply(200, rss(("g1", "Through the proxy"))), client=EGRESS)
    code, out, err = run_cli(capsys, "source", "add", url, "--backfill", "1")
    assert code == 0, err
    source_id = _id(out)
    stack.run_cycle()
    assert storage.sources.get(source_id).entry_count == 1 and len(proxy.relayed) == 2
    code, out, _ = run_cli(capsys, "source", "list")
    assert f"{source_id}  through proxy socks5h://127.0.0.1:{proxy.port} (STARFEED_PROXY)" in out


def test_starfeed_proxys_login_lives_in_the_token_store(stack, storage, origin, capsys, caplog, monkeypatch,
                                                         proxies):
    caplog.set_level(logging.DEBUG, logger="starfeed")
    password = _secret("password")
    proxy = proxies(HttpProxy, ("ada", password))
    global_proxy = proxy.url()  # as the template's Proxy holds it: no login
    monkeypatch.setenv("STARFEED_PROXY", global_proxy)
    fetcher = stack.functions["FetcherFunction"].module.storage
    monkeypatch.setattr(fetcher, "settings", replace(fetcher.settings, proxy=global_proxy))
    monkeypatch.setattr(fetcher.secrets, "_no_proxy_login_until", 0.0)  # an earlier test's answer, kept 5 minutes
    url = origin.serve("/login-proxied.xml", Reply(200, rss(("l1", "Through the proxy, with a login"))),
                       client=EGRESS)
    code, out, err = run_cli(capsys, "source", "add", url, "--backfill", "1")
    assert code == 1 and "the proxy refuses its credentials" in err and "starfeed proxy set URL" in err

    code, out, err = run_cli(capsys, "proxy", "set", proxy.url(("ada", "wrong")).replace("127.0.0.1", "localhost"))
    assert code == 1 and f"STARFEED_PROXY is http://127.0.0.1:{proxy.port}, not http://localhost" in err
    code, out, err = run_cli(capsys, "proxy", "set", proxy.url(("ada", password)))
    assert code == 0 and "kept in SSM parameter /starfeed/source-options/proxy" in out, err
    code, shown, err = run_cli(capsys, "proxy", "show")
    assert shown == f"http://127.0.0.1:{proxy.port} (STARFEED_PROXY), with a login kept in the token store\n"
    code, inspected, err = run_cli(capsys, "inspect", url)
    assert code == 0, err
    code, out, err = run_cli(capsys, "source", "add", url, "--backfill", "1")
    assert code == 0, err
    source_id = _id(out)
    stack.run_cycle()
    assert storage.sources.get(source_id).entry_count == 1 and proxy.refused == 1
    shown += inspected + err + out + everything_shown(stack, storage, capsys, [source_id]) + caplog.text
    assert password not in shown
    assert password not in (stack.state / "stack.json").read_text()

    code, out, err = run_cli(capsys, "proxy", "clear")
    assert (code, out) == (0, "STARFEED_PROXY's login removed from the token store\n")
    code, out, err = run_cli(capsys, "proxy", "show")
    assert out.endswith("(STARFEED_PROXY), without a login\n")


def test_make_runs_token_store_is_kept_in_a_file_of_its_own_across_restarts(stack, storage, origin, capsys,
                                                                             tmp_path):
    from starfeed.local.token_store import TokenStoreFile

    cookie = _secret("cookie")
    url = origin.serve("/kept-secret.xml", Reply(200, rss(("k1", "Kept"))), requires={"cookie": f"s={cookie}"})
    code, out, err = run_cli(capsys, "source", "add", url, "--cookie", f"s={cookie}", "--no-check", "--backfill", "1")
    assert code == 0, err
    source = storage.sources.get(_id(out))
    stale = storage.secrets.source_secret_name("gone")  # a parameter no source names
    storage.secrets.put_source_secret(stale, {"cookies": {"s": "old"}})
    storage.secrets.put_proxy_login({"proxy": "http://p.example:3128", "user": "ada", "password": "pw"})
    saved = TokenStoreFile(storage, tmp_path / "token-store.json")
    assert saved.save_if_changed() and not saved.save_if_changed()  # written once, then only when changed
    assert (tmp_path / "token-store.json").stat().st_mode & 0o777 == 0o600
    assert cookie not in json.dumps(snapshot.capture(stack.stack), default=str)  # not in the state file

    for name in (source.request.secret, stale, storage.secrets.proxy_login_name):  # a restart: the store empty
        storage.client("ssm").delete_parameter(Name=name)
    assert TokenStoreFile(storage, tmp_path / "token-store.json").restore() == 2
    assert storage.secrets.source_secret(source.request.secret) == {"headers": {}, "cookies": {"s": cookie},
                                                                     "proxy": None}
    assert set(storage.secrets.under_path()) == {source.request.secret, storage.secrets.proxy_login_name}
    stack.run_cycle()
    assert storage.sources.get(source.source_id).entry_count == 1


@pytest.mark.parametrize(("option", "value", "why"), [
    ("--proxy", "ftp://proxy.example:21", "ftp: is no proxy scheme starfeed speaks"),
    ("--proxy", "http://", "names no host"),
    ("--proxy", "socks5://proxy.example:1080/path", "without a path"),
    ("--header", "Not a header", "not 'Name: value'"),
    ("--cookie", "no-value", "not 'name=value'"),
])
def test_an_option_that_cannot_be_used_is_refused_at_add_with_the_reason(stack, storage, origin, capsys, option,
                                                                         value, why):
    url = origin.serve("/refused.xml", Reply(200, rss(("x", "X"))))
    code, out, err = run_cli(capsys, "source", "add", url, option, value)
    assert code == 1 and why in err
    assert origin.hits("/refused.xml") == []  # nothing fetched
    assert not any(s.url == url for s in storage.sources.all())


def test_a_secret_that_cannot_be_read_fails_its_source_alone(stack, storage, origin, capsys):
    cookie = _secret("cookie")
    url = origin.serve("/lost.xml", Reply(200, rss(("l1", "Lost"))), requires={"cookie": cookie})
    neighbour = origin.serve("/fine.xml", Reply(200, rss(("f1", "Fine"))))
    code, out, err = run_cli(capsys, "source", "add", url, "--cookie", f"s={cookie}", "--no-check")
    assert code == 0, err
    lost = _id(out)
    code, out, err = run_cli(capsys, "source", "add", neighbour, "--no-check", "--backfill", "1")
    fine = _id(out)
    storage.secrets.delete_source_secret(storage.sources.get(lost).request.secret)
    stack.run_cycle()
    failed = storage.sources.get(lost)
    assert failed.status == "error" and failed.last_error.startswith("unusable options: its secret values")
    assert origin.hits("/lost.xml") == []  # not asked without its cookie
    assert storage.sources.get(fine).entry_count == 1
    code, out, _ = run_cli(capsys, "source", "list")
    assert "failing: unusable options" in out
    # Giving it again mends it.
    code, out, err = run_cli(capsys, "source", "set", lost, "--cookie", f"s={cookie}")
    assert code == 0, err
    stack.run_cycle()
    assert storage.sources.get(lost).status == "ok"
