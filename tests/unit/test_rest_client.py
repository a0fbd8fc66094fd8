"""The REST API's client (starfeed.rest_client) without a network: where a path goes, and no
request without credentials (test_rest_parts.py checks the signature itself)."""

from __future__ import annotations

import pytest

from starfeed.rest_client import CannotCall, api_url, signed


@pytest.mark.parametrize("path", ["feeds", "/feeds", "/api/v1/feeds"])
def test_a_path_goes_under_api_v1_once(path):
    assert api_url("https://api.example.org/", path) == "https://api.example.org/api/v1/feeds"


def test_the_root_of_the_api_is_itself():
    assert api_url("https://api.example.org", "/api/v1") == "https://api.example.org/api/v1"


def test_no_credentials_is_said_before_any_request(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(CannotCall, match="no AWS credentials to sign with"):
        signed("GET", "https://api.example.org/api/v1/feeds", b"", "eu-west-1")
