"""The token store: SSM Parameter Store (SecureString) or Secrets Manager, read through powertools
parameters with caching. It keeps the GitHub token (locally, STARFEED_GITHUB_TOKEN may stand in),
each source's secret request options (docs/design.md#request-options), one JSON object per source
under a name that changes with its values, so a cached copy is never stale, and STARFEED_PROXY's
login, beside them under a fixed name. Never logged, never stored by starfeed anywhere else."""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
from functools import cached_property

log = logging.getLogger(__name__)

TOKEN_ENV = "STARFEED_GITHUB_TOKEN"
CACHE_SECONDS = 300  # a warm function re-reads the token this often (and at once after a 401)
PROXY_LOGIN = "proxy"  # STARFEED_PROXY's login, under the sources' secrets path (a source's names hold a "-")
_NOT_FOUND = ("ParameterNotFound", "ResourceNotFoundException")


class Unreadable(LookupError):
    """A secret that is not in the token store, or cannot be read there; the message names it,
    never its value."""


class Secrets:
    def __init__(self, client_factory, settings):
        self.settings = settings
        self._client_factory = client_factory
        self._absent_until = 0.0  # a missing token is not asked for again on every fetch
        self._no_proxy_login_until = 0.0  # nor a missing proxy login

    @property
    def _ssm(self) -> bool:
        return self.settings.github_token_store != "secretsmanager"

    @cached_property
    def provider(self):
        from aws_lambda_powertools.utilities.parameters import SecretsProvider, SSMProvider

        if self._ssm:
            return SSMProvider(boto3_client=self._client_factory("ssm"))
        return SecretsProvider(boto3_client=self._client_factory("secretsmanager"))

    @property
    def token_name(self) -> str:
        name = self.settings.github_token_name
        # SSM names with a hierarchy start with "/"; the template's parameter holds it without.
        return "/" + name.lstrip("/") if self._ssm and "/" in name else name

    def github_token(self, force: bool = False) -> str | None:
        """The stored token, else STARFEED_GITHUB_TOKEN, else None. Found or not, the answer is
        kept CACHE_SECONDS; force (after a 401) asks the store again."""
        from aws_lambda_powertools.utilities.parameters import GetParameterError

        token = None
        if force or time.monotonic() >= self._absent_until:
            try:
                token = self.provider.get(self.token_name, max_age=CACHE_SECONDS, force_fetch=force,
                                          **({"decrypt": True} if self._ssm else {}))
            except GetParameterError as exc:
                # The message names the parameter, never its value.
                log.debug("github token not in %s: %s", self.settings.github_token_store, type(exc).__name__)
                self._absent_until = time.monotonic() + CACHE_SECONDS
        token = token.decode() if isinstance(token, bytes) else token
        return (token or "").strip() or os.environ.get(TOKEN_ENV, "").strip() or None

    def put_github_token(self, token: str) -> str:
        """Store the token where the deployment reads it; returns where."""
        if not self._ssm:
            client = self._client_factory("secretsmanager")
            try:
                client.put_secret_value(SecretId=self.token_name, SecretString=token)
            except client.exceptions.ResourceNotFoundException:
                client.create_secret(Name=self.token_name, SecretString=token)
            return f"Secrets Manager secret {self.token_name}"
        self._client_factory("ssm").put_parameter(Name=self.token_name, Value=token, Type="SecureString",
                                                  Overwrite=True)
        return f"SSM parameter {self.token_name} (SecureString)"

    def source_secret_name(self, source_id: str) -> str:
        """A new name for a source's secret values: a changed value is a new parameter."""
        name = f"{self.settings.source_secrets_path.strip('/')}/{source_id}-{secrets.token_hex(4)}"
        return "/" + name if self._ssm else name

    def source_secret(self, name: str) -> dict:
        """A source's secret values as stored; Unreadable names why not."""
        from aws_lambda_powertools.utilities.parameters import GetParameterError

        try:
            value = self.provider.get(name, max_age=CACHE_SECONDS, **({"decrypt": True} if self._ssm else {}))
        except GetParameterError as exc:
            # The message names the parameter, never its value.
            raise Unreadable(f"{name} cannot be read from the token store ({_cause(exc)})") from None
        try:
            return json.loads(value.decode() if isinstance(value, bytes) else value)
        except (TypeError, ValueError):
            raise Unreadable(f"{name} in the token store is not JSON") from None

    def put_source_secret(self, name: str, values: dict) -> None:
        text = json.dumps(values)
        if self._ssm:
            self._client_factory("ssm").put_parameter(Name=name, Value=text, Type="SecureString", Overwrite=True)
        else:
            self._client_factory("secretsmanager").create_secret(Name=name, SecretString=text)

    @property
    def proxy_login_name(self) -> str:
        name = f"{self.settings.source_secrets_path.strip('/')}/{PROXY_LOGIN}"
        return "/" + name if self._ssm else name

    def proxy_login(self) -> dict | None:
        """STARFEED_PROXY's login as `starfeed proxy set` stored it, or None when there is none;
        either answer is kept CACHE_SECONDS. Unreadable names why it cannot be read."""
        from aws_lambda_powertools.utilities.parameters import GetParameterError

        if time.monotonic() < self._no_proxy_login_until:
            return None
        name = self.proxy_login_name
        try:
            value = self.provider.get(name, max_age=CACHE_SECONDS, **({"decrypt": True} if self._ssm else {}))
        except GetParameterError as exc:
            if _cause(exc) in _NOT_FOUND:
                self._no_proxy_login_until = time.monotonic() + CACHE_SECONDS
                return None
            raise Unreadable(f"{name} cannot be read from the token store ({_cause(exc)})") from None
        try:
            return json.loads(value.decode() if isinstance(value, bytes) else value)
        except (TypeError, ValueError):
            raise Unreadable(f"{name} in the token store is not JSON") from None

    def put_proxy_login(self, values: dict) -> str:
        """Store STARFEED_PROXY's login; returns where."""
        return self._put(self.proxy_login_name, json.dumps(values))

    def _put(self, name: str, text: str) -> str:
        """Create or overwrite an entry; returns where."""
        if self._ssm:
            self._client_factory("ssm").put_parameter(Name=name, Value=text, Type="SecureString", Overwrite=True)
            return f"SSM parameter {name} (SecureString)"
        client = self._client_factory("secretsmanager")
        try:
            client.put_secret_value(SecretId=name, SecretString=text)
        except client.exceptions.ResourceNotFoundException:
            client.create_secret(Name=name, SecretString=text)
        return f"Secrets Manager secret {name}"

    def under_path(self) -> dict[str, str]:
        """Every entry under the sources' secrets path, the proxy's login included: {name: its JSON
        text}, for `make run` to keep across restarts."""
        path = self.settings.source_secrets_path.strip("/")
        if self._ssm:
            pages = self._client_factory("ssm").get_paginator("get_parameters_by_path").paginate(
                Path="/" + path, Recursive=True, WithDecryption=True)
            return {p["Name"]: p["Value"] for page in pages for p in page["Parameters"]}
        client = self._client_factory("secretsmanager")
        pages = client.get_paginator("list_secrets").paginate(Filters=[{"Key": "name", "Values": [path + "/"]}])
        names = [e["Name"] for page in pages for e in page["SecretList"] if e["Name"].startswith(path + "/")]
        return {name: client.get_secret_value(SecretId=name)["SecretString"] for name in names}

    def put_under_path(self, entries: dict[str, str]) -> None:
        """Put back what under_path gave."""
        for name, text in entries.items():
            self._put(name, text)

    def delete_proxy_login(self) -> bool:
        """Whether there was one to delete."""
        try:
            if self._ssm:
                self._client_factory("ssm").delete_parameter(Name=self.proxy_login_name)
            else:
                self._client_factory("secretsmanager").delete_secret(SecretId=self.proxy_login_name,
                                                                     ForceDeleteWithoutRecovery=True)
        except Exception as exc:  # botocore's ClientError, known by its code; re-raised unless not found
            if _cause(exc) in _NOT_FOUND:
                return False
            raise
        return True

    def delete_source_secret(self, name: str) -> None:
        """Best effort: a secret left behind is only a parameter no source names."""
        try:
            if self._ssm:
                self._client_factory("ssm").delete_parameter(Name=name)
            else:
                self._client_factory("secretsmanager").delete_secret(SecretId=name, ForceDeleteWithoutRecovery=True)
        except Exception as exc:  # noqa: BLE001 - the source no longer names it
            log.warning("the secret %s was not deleted: %s", name, type(exc).__name__)


def _cause(exc: Exception) -> str:
    cause = exc.__cause__ or exc.__context__ or exc
    return getattr(cause, "response", {}).get("Error", {}).get("Code") or type(cause).__name__
