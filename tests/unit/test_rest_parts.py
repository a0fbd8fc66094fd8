"""The REST API's pure parts: the path API Gateway decodes, the times a query names, the route a
request takes, and the document's access rules (its cursors: test_cursors.py)."""

import json
import re

import pytest

from starfeed.local.http_bridge import Route, route_for
from starfeed.serve.rest.app import RestApi, allowed_methods, authorized, routed_path
from starfeed.serve.rest.feeds import stamp
from starfeed.serve.rest.problems import ApiProblem
from starfeed.settings import Settings
from starfeed.store import Storage


@pytest.mark.parametrize("path, routed", [
    ("/api/v1/entries/https://x.example/post/1", "/api/v1/entries/https%3A%2F%2Fx.example%2Fpost%2F1"),
    ("/api/v1/entries/https%3A%2F%2Fx.example%2Fp", "/api/v1/entries/https%253A%252F%252Fx.example%252Fp"),
    ("/api/v1/entries/plain", "/api/v1/entries/plain"),
    ("/api/v1/entries", "/api/v1/entries"), ("/api/v1/entries/", "/api/v1/entries/"),
    ("/api/v1/feeds/abc/entries", "/api/v1/feeds/abc/entries")])
def test_an_entry_uid_s_slashes_stay_in_its_segment(path, routed):
    assert routed_path(path) == routed


@pytest.mark.parametrize("given, stored", [
    ("2026-11-26T08:00:00Z", "2026-11-26T08:00:00Z"), ("2026-11-26T10:00:00+02:00", "2026-11-26T08:00:00Z"),
    ("2026-11-26", "2026-11-26T00:00:00Z"), ("2026-11-26T08:00", "2026-11-26T08:00:00Z"),
    ("2026-11-26t08:00:00.123456789z", "2026-11-26T08:00:00Z"), (None, None)])
def test_a_query_s_time_is_stored_as_utc_to_the_second(given, stored):
    assert stamp(given) == stored


def test_a_date_that_is_none_is_a_400():
    with pytest.raises(ApiProblem) as refused:
        stamp("2026-13-45")
    assert refused.value.status == 400 and "RFC 3339" in refused.value.detail


def test_a_request_takes_the_route_api_gateway_would_choose():
    routes = [Route("GET", "/", "ApiFunction", False), Route("GET", "/{proxy+}", "ApiFunction", False),
              Route("ANY", "/api/v1/{proxy+}", "RestFunction", True)]
    assert route_for(routes, "GET", "/").function == "ApiFunction"
    assert route_for(routes, "GET", "/api/v1/feeds").function == "RestFunction"
    assert route_for(routes, "TRACE", "/api/v1/feeds").function == "RestFunction"
    assert route_for(routes, "GET", "/api/v1").function == "ApiFunction"  # the public route: the function refuses it
    assert route_for(routes, "POST", "/feed.xml") is None


def test_only_a_request_api_gateway_authorized_is_served():
    assert authorized({"requestContext": {"authorizer": {"iam": {"userArn": "arn:aws:iam::1:user/x"}}}})
    assert not authorized({"requestContext": {"authorizer": {"jwt": {}}}})
    assert not authorized({"requestContext": {}}) and not authorized({})


def test_a_known_path_names_its_methods():
    paths = {"/api/v1/feeds/{feed_id}": {"get": {}, "delete": {}}, "/api/v1/feeds": {"get": {}, "post": {}}}
    assert allowed_methods(paths, "/api/v1/feeds/abc") == ["DELETE", "GET"]
    assert allowed_methods(paths, "/api/v1/feeds/") == ["GET", "POST"]
    assert allowed_methods(paths, "/api/v1/nothing") == []


@pytest.mark.parametrize("auth, signed", [("iam", True), ("loopback", False)])
def test_the_document_asks_a_sigv4_signature_where_api_gateway_verifies_one(auth, signed):
    api = RestApi(Storage(Settings(api_auth=auth)), "https://api.example")
    document = json.loads(api.openapi_document)
    assert document["servers"] == [{"url": "https://api.example"}]
    assert ("security" in document) == signed
    if signed:
        assert document["security"] == [{"sigv4": []}]
        assert document["components"]["securitySchemes"]["sigv4"]["name"] == "Authorization"


def test_a_signed_request_carries_a_sigv4_authorization_for_execute_api(monkeypatch):
    from starfeed.rest_client import api_url, signed

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    url, headers = signed("GET", api_url("https://abc.execute-api.eu-west-1.amazonaws.com/", "feeds?limit=5"), b"",
                          "eu-west-1")
    assert url == "https://abc.execute-api.eu-west-1.amazonaws.com/api/v1/feeds?limit=5"
    assert re.match(r"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/eu-west-1/execute-api/aws4_request, "
                    r"SignedHeaders=host;x-amz-date, Signature=[0-9a-f]{64}$", headers["Authorization"])
