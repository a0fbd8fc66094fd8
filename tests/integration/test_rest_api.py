"""The REST API under /api/v1 (docs/design.md#rest-api), through the HTTP bridge as a program calls it:
every route, its answers checked against the OpenAPI document it serves, paging by Link headers,
RFC 9457 problems, and the IAM gate."""

import json
import re
import time
from urllib.parse import quote, urlsplit

import pytest
import requests
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

from starfeed.fetch.entries import store_entries
from starfeed.fetch.job import fetch_source
from starfeed.model import Entry
from starfeed.sources import add_source

from conftest import load_event
from origin import Reply, rss

V1 = "/api/v1"


@pytest.fixture(scope="module")
def openapi(api_url):
    document = requests.get(f"{api_url}{V1}/openapi.json", timeout=10).json()
    assert document["servers"] == [{"url": "http://feeds.test"}]  # the stack's public URL
    # RFC 9457 problems are JSON too.
    config = Config(extra_media_type_deserializers={"application/problem+json": json.loads})
    return OpenAPI.from_dict({**document, "servers": [{"url": api_url}]}, config=config)


def call(api_url, openapi, method: str, path: str, **kwargs) -> requests.Response:
    """A request to the local API, its answer validated against the OpenAPI document."""
    response = requests.request(method, path if path.startswith("http") else f"{api_url}{path}", timeout=30,
                                **kwargs)
    openapi.validate_response(RequestsOpenAPIRequest(response.request), RequestsOpenAPIResponse(response))
    return response


def on_bridge(api_url: str, url: str) -> str:
    """A `next` URL (the stack's public URL) on the local bridge."""
    parts = urlsplit(url)
    return f"{api_url}{parts.path}?{parts.query}"


def walk(api_url, openapi, path: str, key: str) -> list[list[dict]]:
    """Every page from path on, following the Link rel=next header; each page's `next` agrees."""
    pages, url = [], f"{api_url}{path}"
    while url:
        response = call(api_url, openapi, "GET", url)
        assert response.status_code == 200, response.text
        document = response.json()
        pages.append(document[key])
        link = response.headers.get("Link")
        assert (link is None) == (document["next"] is None)
        url = on_bridge(api_url, re.match(r'<([^>]+)>; rel="next"', link).group(1)) if link else None
        assert len(pages) < 100, "the pages do not end"
    return pages


def test_the_openapi_document_is_generated_and_valid(api_url):
    from openapi_spec_validator import validate

    response = requests.get(f"{api_url}{V1}/openapi.json", timeout=10)
    assert response.status_code == 200
    document = response.json()
    validate(document)
    operations = {(m.upper(), p) for p, ops in document["paths"].items() for m in ops}
    assert operations == {
        ("GET", f"{V1}/feeds"), ("POST", f"{V1}/feeds"), ("GET", f"{V1}/feeds/{{feed_id}}"),
        ("DELETE", f"{V1}/feeds/{{feed_id}}"), ("POST", f"{V1}/feeds/{{feed_id}}/refetch"),
        ("POST", f"{V1}/feeds/{{feed_id}}/backfill"),
        ("GET", f"{V1}/feeds/{{feed_id}}/entries"), ("GET", f"{V1}/entries"),
        ("GET", f"{V1}/entries/{{entry_uid}}"), ("GET", f"{V1}/raw/{{fetch_id}}"),
        ("GET", f"{V1}/rules"), ("POST", f"{V1}/rules"), ("DELETE", f"{V1}/rules/{{rule_id}}")}
    # Locally the bridge lets loopback callers in: the document asks no signature (on AWS it does).
    assert "security" not in document and "securitySchemes" not in document["components"]


def test_subscribe_walk_entries_and_fetch_one_and_its_raw_bytes(stack, storage, api_url, openapi, origin):
    uids = [f"https://rest.example/post/{n}?p={n}" for n in range(23)]
    body = rss(*[(uid, f"Rest {n}") for n, uid in enumerate(uids)], title="Rest feed")
    url = origin.serve("/rest.xml", Reply(200, body, {"Content-Type": "application/rss+xml", "ETag": '"r1"'}))
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))

    added = call(api_url, openapi, "POST", f"{V1}/feeds", json={"url": url, "backfill": 23,
                                                                "collections": ["rest"]})
    assert added.status_code == 201, added.text
    feed = added.json()["feed"]
    assert added.headers["Location"].endswith(f"{V1}/feeds/{feed['id']}")
    assert added.json()["outcome"] == "added" and '"Rest feed", 23 entries' in added.json()["found"]
    again = call(api_url, openapi, "POST", f"{V1}/feeds", json={"url": url})
    assert again.status_code == 200 and again.json()["outcome"] == "already subscribed"
    fetch_source(storage, feed["id"])

    shown = call(api_url, openapi, "GET", f"{V1}/feeds/{feed['id']}").json()
    assert shown["state"] == "ok" and shown["stats"]["entry_count"] == 23 and shown["collections"] == ["rest"]
    assert shown["validators"]["etag"] == '"r1"'
    listed = [f["id"] for page in walk(api_url, openapi, f"{V1}/feeds?limit=40", "feeds") for f in page]
    assert listed.count(feed["id"]) == 1 and len(listed) == len(set(listed))

    # A feed's entries, 5 to a page: every one exactly once, newest first.
    pages = walk(api_url, openapi, f"{V1}/feeds/{feed['id']}/entries?limit=5", "entries")
    assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
    walked = [e["entry_uid"] for page in pages for e in page]
    assert walked == uids
    # since/until: the entries are a minute apart, newest a minute ago.
    window = call(api_url, openapi, "GET", f"{V1}/feeds/{feed['id']}/entries",
                  params={"since": pages[1][4]["published"], "until": pages[0][2]["published"]}).json()
    assert [e["entry_uid"] for e in window["entries"]] == uids[3:10]

    # Across feeds, in the order first stored: ours among them, each once.
    across = [e for page in walk(api_url, openapi, f"{V1}/entries?since={since}&limit=4", "entries") for e in page]
    ours = [e["entry_uid"] for e in across if e["feed_id"] == feed["id"]]
    assert sorted(ours) == sorted(uids)
    keys = [(e["feed_id"], e["entry_uid"]) for e in across]
    assert len(keys) == len(set(keys))
    assert [e["first_seen"] for e in across] == sorted(e["first_seen"] for e in across)

    # One entry by its uid, encoded whole (its slashes and its ?), then its raw payload.
    entry = call(api_url, openapi, "GET", f"{V1}/entries/{quote(uids[7], safe='')}").json()
    assert entry["entry_uid"] == uids[7] and entry["title"] == "Rest 7" and entry["feed_id"] == feed["id"]
    assert entry["links"]["self"].startswith("http://feeds.test/api/v1/entries/https%3A%2F%2F")
    raw = call(api_url, openapi, "GET", on_bridge(api_url, entry["links"]["raw"]))
    assert raw.status_code == 200 and raw.content == body
    assert raw.headers["Starfeed-Origin-Status"] == "200"
    assert raw.headers["Starfeed-Origin-ETag"] == '"r1"' and raw.headers["Content-Security-Policy"] == "sandbox"
    assert raw.headers["Starfeed-Url"] == url


def test_errors_are_problems_a_person_can_act_on(stack, storage, api_url, openapi):
    # A stored source's digest, so that asking for its key by hand finds it if anything does.
    stamp = "2026-11-01T00:00:00Z"
    store_entries(storage, [Entry(entry_uid="e1", feed_id="e0000000000d", content_hash="h", first_seen=stamp,
                                  last_seen=stamp)], time.time())
    assert storage.entries.digests(["e0000000000d"])
    cases = [("GET", f"{V1}/feeds/abcdef123", {}, 404, "no feed with id abcdef123"),
             ("GET", f"{V1}/feeds/not%20an%20id", {}, 422, "path.feed_id"),
             ("GET", f"{V1}/feeds?limit=0", {}, 422, "query.limit"),
             ("GET", f"{V1}/feeds?cursor=bm9wZQ", {}, 400, "cursor is not a cursor of this list"),
             ("GET", f"{V1}/entries/no-such-entry", {}, 404, "no stored entry has this uid"),
             ("GET", f"{V1}/entries/%01digest", {}, 404, "no stored entry has this uid"),  # a source's digest
             ("GET", f"{V1}/raw/{'0' * 32}", {}, 404, "no raw payload"),
             ("POST", f"{V1}/feeds", {"json": {"url": "ftp://example.org/feed"}}, 422, "not an http(s) URL"),
             ("POST", f"{V1}/feeds", {"json": {"url": "http://x.test/f", "surprise": 1}}, 422, "body.surprise"),
             ("POST", f"{V1}/feeds", {"data": "{not json", "headers": {"Content-Type": "application/json"}}, 422,
              "")]
    # Cursors crafted by hand: keys no page could have given, refused before any query.
    from starfeed.cursors import encode_keys

    for path, keys in ((f"{V1}/feeds", {"k": "feeds", "created_at": "abc", "id": "abcdef"}),
                       (f"{V1}/entries", {"seen_day": "1990-01-01", "first_seen": "1990-01-01T00:00:00Z",
                                          "feed_id": "abcdef", "entry_uid": "x"}),
                       (f"{V1}/entries", {"seen_day": "2026-02-30", "first_seen": "2026-02-28T00:00:00Z",
                                          "feed_id": "abcdef", "entry_uid": "x"}),
                       (f"{V1}/entries", {"seen_day": time.strftime("%Y-%m-%d"), "first_seen": "then",
                                          "feed_id": "abcdef", "entry_uid": "x"}),
                       (f"{V1}/entries", {"seen_day": time.strftime("%Y-%m-%d"), "first_seen": "2026-11-26T00:00:00Z",
                                          "feed_id": "abcdef", "entry_uid": "é" * 600})):
        kind = keys.pop("k", path.rsplit("/", 1)[1])
        cases.append(("GET", f"{path}?cursor={encode_keys(kind, keys)}", {}, 400, "cursor is not a cursor"))
    feed_id = add_source(storage, "https://example.org/problems.xml", time.time())[0].source_id
    elsewhere = encode_keys("feed-entries",
                            {"feed_id": feed_id, "entry_uid": "x", "sort_key": "1999-01-01T00:00:00Z#x"})
    cases += [("GET", f"{V1}/feeds/{feed_id}/entries?since=2026-02-01&until=2026-01-01", {}, 400,
               "is later than until"),
              ("GET", f"{V1}/feeds/{feed_id}/entries?since=9999-12-31T23:59:59-01:00", {}, 400, "is not a time"),
              ("GET", f"{V1}/feeds/{feed_id}/entries?since=2026-01-01&cursor={elsewhere}", {}, 400, "cursor is not")]
    cases += [("PATCH", f"{V1}/feeds", {}, 405, "PATCH is not allowed here: this route takes GET, POST"),
              ("POST", f"{V1}/feeds", {"json": {"url": "http://feeds.test/feed.xml"}}, 422,
               "this starfeed's own URL")]
    for method, path, kwargs, status, words in cases:
        response = requests.request(method, f"{api_url}{path}", timeout=10, **kwargs)
        assert response.status_code == status, (path, response.text)
        assert response.headers["Content-Type"] == "application/problem+json"
        problem = response.json()
        assert problem["status"] == status and problem["title"] and words in response.text, (path, problem)
    # A route API Gateway has not got answers as it would, before any function.
    assert requests.put(f"{api_url}/feed.xml", timeout=10).status_code == 404
    storage.entries.purge("e0000000000d")


def test_remove_and_refetch_take_the_cli_s_path(stack, storage, api_url, openapi, origin):
    url = origin.serve("/rest-gone.xml", Reply(200, rss(("g1", "Gone soon"))))
    feed = call(api_url, openapi, "POST", f"{V1}/feeds", json={"url": url, "backfill": 1}).json()["feed"]
    fetch_source(storage, feed["id"])
    assert storage.sources.get(feed["id"]).next_check_at > time.time()
    refetch = call(api_url, openapi, "POST", f"{V1}/feeds/{feed['id']}/refetch")
    assert refetch.status_code == 202
    assert storage.sources.get(feed["id"]).next_check_at <= time.time()  # due now: the next run fetches it

    removed = call(api_url, openapi, "DELETE", f"{V1}/feeds/{feed['id']}")
    assert removed.status_code == 200 and removed.json()["state"] == "removed" and removed.json()["removed_at"]
    # Removed is gone for the API, until the URL is subscribed again.
    for method, path in (("DELETE", ""), ("GET", ""), ("GET", "/entries"), ("POST", "/refetch")):
        gone = call(api_url, openapi, method, f"{V1}/feeds/{feed['id']}{path}")
        assert gone.status_code == 404 and "was removed" in gone.json()["detail"], (method, path)
    assert call(api_url, openapi, "GET", f"{V1}/entries/g1").status_code == 404
    assert requests.get(f"{api_url}/s/{feed['id']}/feed.xml", timeout=10).status_code == 404
    restored = call(api_url, openapi, "POST", f"{V1}/feeds", json={"url": url})
    assert restored.status_code == 200 and restored.json()["outcome"] == "restored"


def test_a_page_without_a_feed_is_subscribed_by_its_selectors_as_source_add_does(stack, storage, api_url, openapi,
                                                                                  origin):
    posts = "".join(f'<article class="post"><h2><a href="/p/{n}">Post {n}</a></h2></article>' for n in range(3))
    url = origin.serve("/rest-list", Reply(200, f"<html><body>{posts}</body></html>".encode(),
                                           {"Content-Type": "text/html"}))
    selectors = {"items": "article.post", "title": "h2", "link": "h2 a"}
    refused = [({"items": "article.post", "title": "h3 >", "link": "a"},
                "the title selector 'h3 >' is not a CSS selector starfeed can use"),
               ({**selectors, "date": ".when"}, "the date selector '.when' found nothing in any of the 3 items"),
               ({"items": "article.post", "title": "h2"}, "body.selectors.link"),
               ({**selectors, "surprise": "x"}, "body.selectors.surprise")]
    for given, words in refused:
        response = call(api_url, openapi, "POST", f"{V1}/feeds", json={"url": url, "selectors": given})
        assert response.status_code == 422 and words in response.text, (given, response.text)
    both = call(api_url, openapi, "POST", f"{V1}/feeds", json={"url": url, "selectors": selectors, "website": True})
    assert both.status_code == 422 and "give one or the other" in both.text
    assert url not in {s.url for s in storage.sources.all()}

    added = call(api_url, openapi, "POST", f"{V1}/feeds", json={"url": url, "selectors": selectors, "backfill": 5})
    assert added.status_code == 201, added.text
    body = added.json()
    assert body["found"] == "web page read by selectors, 3 entries"
    feed = body["feed"]
    assert (feed["kind"], feed["selectors"]) == ("selectors", {**selectors, "date": None, "summary": None})
    assert storage.sources.get(feed["id"]).selectors.link == "h2 a"
    fetch_source(storage, feed["id"])
    titles = [e["title"] for e in call(api_url, openapi, "GET", f"{V1}/feeds/{feed['id']}/entries").json()["entries"]]
    assert sorted(titles) == ["Post 0", "Post 1", "Post 2"]


def test_a_request_without_iam_authorization_is_refused_by_the_function(stack):
    """On AWS, API Gateway verifies the signature; a request that reached the function another
    way (a route without IAM authorization) is refused there too."""
    from starfeed.local.http_bridge import http_routes, route_for

    event = load_event("rest.json")
    assert stack.functions["RestFunction"].invoke(event)["statusCode"] == 200
    event["requestContext"].pop("authorizer")
    refused = stack.functions["RestFunction"].invoke(event)
    assert refused["statusCode"] == 403 and "SigV4" in refused["body"]
    routes = http_routes(stack.stack)
    assert route_for(routes, "GET", f"{V1}/feeds").iam  # API Gateway's choice: the /api/v1 route
    assert route_for(routes, "DELETE", f"{V1}/feeds/abc").function == "RestFunction"
    assert not route_for(routes, "GET", "/feed.xml").iam and route_for(routes, "POST", "/feed.xml") is None


def test_schemathesis_finds_no_answer_that_breaks_the_document(stack, storage, api_url, origin, tmp_path):
    """Generated requests to every route but subscribing (it fetches what it is given): each
    answer must match the document, and none may be a 5xx."""
    import subprocess
    import sys
    from pathlib import Path

    url = origin.serve("/fuzzed.xml", Reply(200, rss(("f1", "Fuzzed one"), ("f2", "Fuzzed two"))))
    feed = requests.post(f"{api_url}{V1}/feeds", json={"url": url, "backfill": 2}, timeout=30).json()["feed"]
    fetch_source(storage, feed["id"])
    config = Path(__file__).parent.parent / "data" / "schemathesis.toml"
    command = [str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(config), "run",
               f"{api_url}{V1}/openapi.json",
               "--url", api_url, "--checks", "all", "--exclude-operation-id", "subscribe",
               "--max-examples", "25", "--seed", "1", "--max-time", "20", "--workers", "2",
               "--report-dir", str(tmp_path)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)  # its cache there
    requests.delete(f"{api_url}{V1}/feeds/{feed['id']}", timeout=10)  # refetched: due, at an origin about to go
    failures = run.stdout[run.stdout.find("FAILURES"):]
    assert run.returncode == 0, re.sub(r"(%[0-9A-F]{2}){60,}", "…", failures)[:8000] + run.stderr[-2000:]


def test_the_cli_signs_its_requests_and_prints_the_answer(stack, storage, api_url, origin, capsys, monkeypatch):
    from conftest import run_cli

    monkeypatch.setenv("STARFEED_PUBLIC_URL", api_url)
    url = origin.serve("/rest-cli.xml", Reply(200, rss(("c1", "By the CLI"))))
    code, out, err = run_cli(capsys, "api", "POST", "feeds", "--data", json.dumps({"url": url, "backfill": 1}))
    assert code == 0, err
    feed = json.loads(out)["feed"]
    fetch_source(storage, feed["id"])
    code, out, _ = run_cli(capsys, "api", "GET", f"/api/v1/feeds/{feed['id']}/entries")
    assert code == 0 and [e["title"] for e in json.loads(out)["entries"]] == ["By the CLI"]
    code, out, err = run_cli(capsys, "api", "GET", "/feeds/abcdef999")
    assert code == 1 and out == "" and "404 Not Found: no feed with id abcdef999" in err
    code, _, err = run_cli(capsys, "api", "POST", "feeds", "--data", "{nope")
    assert code == 1 and "--data is not JSON" in err



def test_the_bridge_answers_the_rest_api_to_loopback_callers_only(stack):
    """`make run` bound to every address (STARFEED_HOST=0.0.0.0): a caller from another address
    gets API Gateway's 403 for the IAM routes, and the public routes as before."""
    import socket
    import threading

    from starfeed.local.http_bridge import http_routes, serve

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        address = probe.getsockname()[0]
    except OSError:
        address = "127.0.0.1"
    finally:
        probe.close()
    if address.startswith("127."):
        pytest.skip("this machine has no address but loopback")
    server = serve("0.0.0.0", 0)
    server.routes, server.functions = http_routes(stack.stack), stack.functions
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        remote = requests.get(f"http://{address}:{server.server_port}{V1}/feeds", timeout=10)
        assert remote.status_code == 403 and remote.json() == {"message": "Forbidden"}
        public = requests.get(f"http://{address}:{server.server_port}/api/item", timeout=10)
        assert public.status_code == 400 and public.text.startswith("expected /api/item?url=")  # the api function
        assert requests.get(f"http://127.0.0.1:{server.server_port}{V1}/feeds", timeout=10).status_code == 200
    finally:
        server.shutdown()
        server.server_close()


def test_a_feed_subscribed_already_joins_collections_and_says_what_it_kept(stack, storage, api_url, openapi, origin):
    url = origin.serve("/rest-again.xml", Reply(200, rss(("a1", "Again"))))
    first = call(api_url, openapi, "POST", f"{V1}/feeds", json={"url": url, "check": False}).json()["feed"]
    # The same feed, spelled otherwise, with options.
    shouted = url.replace("http://", "HTTP://") + "#top"
    again = call(api_url, openapi, "POST", f"{V1}/feeds",
                 json={"url": shouted, "collections": ["later"], "deframe": True, "check": False})
    assert again.status_code == 200 and again.json()["outcome"] == "already subscribed"
    assert again.json()["feed"]["id"] == first["id"] and again.json()["feed"]["collections"] == ["later"]
    assert again.json()["joined"] == ["later"]
    assert again.json()["not_applied"] == ["deframe (`starfeed source deframe ID on`)"]
    head = requests.head(f"{api_url}{V1}/feeds/{first['id']}", timeout=10)
    assert head.status_code == 200 and head.content == b"" and head.headers["Content-Type"] == "application/json"
    requests.delete(f"{api_url}{V1}/feeds/{first['id']}", timeout=10)  # never fetched: due, at an origin about to go


def test_a_tunnel_s_requests_are_not_this_machine_s(api_url):
    """A tunnel (ssh -R, cloudflared) connects from loopback: the IAM routes still refuse what it
    relays, by the Host it was reached at or the forwarding headers it adds."""
    assert requests.get(f"{api_url}{V1}/feeds?limit=1", timeout=10).status_code == 200
    for headers in ({"Host": "my-tunnel.example"}, {"X-Forwarded-For": "203.0.113.9"},
                    {"Forwarded": "for=203.0.113.9"}):
        relayed = requests.get(f"{api_url}{V1}/feeds?limit=1", headers=headers, timeout=10)
        assert relayed.status_code == 403 and relayed.json() == {"message": "Forbidden"}, headers
    assert requests.get(f"{api_url}/api/item", headers={"Host": "my-tunnel.example"}, timeout=10).status_code == 400


def test_the_bridge_refuses_a_body_over_api_gateway_s_limit_unread(api_url):
    import socket

    host, port = api_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"POST /websub/abcdef/0 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 800000000\r\n\r\n")
        assert conn.recv(200).startswith(b"HTTP/1.1 413 ")  # answered before any of the body was sent
    chunked = requests.post(f"{api_url}/websub/abcdef/0", data=iter([b"<rss/>"]), timeout=10)
    assert chunked.status_code == 411


@pytest.mark.parametrize("path", [f"{V1}/rules", f"{V1}/feeds"])
def test_a_body_that_is_not_utf8_is_the_caller_s_mistake_in_words(api_url, openapi, path):
    answer = call(api_url, openapi, "POST", path, data=b'{"url": "\xc8\x00"}',
                  headers={"Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == "the request's body is not UTF-8 text: send JSON"
