"""The RabbitMQ management HTTP API, as far as the adapter needs it (httpx, synchronous)."""

from __future__ import annotations

from typing import Any, Literal, overload
from urllib.parse import quote

import httpx

from console.brokers.base import BrokerError

QUEUE_COLUMNS = (
    "name,vhost,type,durable,arguments,policy,effective_policy_definition,messages,consumers,"
    "head_message_timestamp"
)


def quoted(name: str) -> str:
    """A vhost or queue name as one URL path segment (``/`` -> ``%2F``)."""
    return quote(name, safe="")


class ManagementAPI:
    """A small client for ``/api/...``; every failure becomes a BrokerError naming the URL.

    401 (wrong credentials), 403 (user without the ``management`` tag) and 404 are permanent;
    network errors, timeouts and 5xx answers are not.
    """

    def __init__(self, base_url: str, username: str, password: str, *, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.username = username
        self._client = httpx.Client(
            base_url=self.base_url, auth=(username, password), timeout=timeout,
            headers={"content-type": "application/json"},
        )

    def get(self, path: str, **params: Any) -> Any:
        return _json(self._request("GET", path, params=params or None), self._where())

    def find(self, path: str, **params: Any) -> Any | None:
        """Like :meth:`get`, but None when there is nothing at ``path`` (404)."""
        response = self._request("GET", path, params=params or None, missing_ok=True)
        return None if response is None else _json(response, self._where())

    def put(self, path: str, body: Any) -> None:
        self._request("PUT", path, json=body)

    def delete(self, path: str) -> bool:
        """Delete what is at ``path``; False if nothing was there."""
        return self._request("DELETE", path, missing_ok=True) is not None

    def queues(self, vhost: str | None = None) -> list[dict[str, Any]]:
        path = f"/api/queues/{quoted(vhost)}" if vhost else "/api/queues"
        queues: list[dict[str, Any]] = self.get(path, columns=QUEUE_COLUMNS)
        return queues

    def queue(self, vhost: str, name: str) -> dict[str, Any]:
        queue: dict[str, Any] = self.get(f"/api/queues/{quoted(vhost)}/{quoted(name)}", columns=QUEUE_COLUMNS)
        return queue

    def exchanges(self, vhost: str | None = None) -> list[dict[str, Any]]:
        path = f"/api/exchanges/{quoted(vhost)}" if vhost else "/api/exchanges"
        exchanges: list[dict[str, Any]] = self.get(path, columns="name,vhost,type")
        return exchanges

    def bindings(self, vhost: str | None = None) -> list[dict[str, Any]]:
        bindings: list[dict[str, Any]] = self.get(f"/api/bindings/{quoted(vhost)}" if vhost else "/api/bindings")
        return bindings

    def _where(self) -> str:
        return f"the RabbitMQ management API at {self.base_url}"

    @overload
    def _request(self, method: str, path: str, *, missing_ok: Literal[False] = False,
                 **kwargs: Any) -> httpx.Response: ...

    @overload
    def _request(self, method: str, path: str, *, missing_ok: bool, **kwargs: Any) -> httpx.Response | None: ...

    def _request(self, method: str, path: str, *, missing_ok: bool = False, **kwargs: Any) -> httpx.Response | None:
        """Send one request; a failure is told in our own words, never with the text that
        answered (the URL may name any server, and an admin's page shows what we say)."""
        where = self._where()
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise BrokerError(f"{where} did not answer in time", permanent=False) from None
        except httpx.ConnectError:
            raise BrokerError(f"cannot reach {where}: the connection was refused or the host is unknown",
                              permanent=False) from None
        except httpx.HTTPError as exc:
            raise BrokerError(f"cannot reach {where}: it did not answer as an HTTP server does "
                              f"({type(exc).__name__})", permanent=False) from None
        if response.status_code == 401 and _refusal(response) not in ("", "Login failed"):
            # Signed in, but the user's tags do not allow this (runtime parameters such as a
            # shovel need the 'policymaker' or 'administrator' tag).
            raise BrokerError(f"{where} refused user {self.username!r} {method} {path}: the user's tags "
                              "do not allow it (a shovel needs 'policymaker' or 'administrator')", permanent=True)
        if response.status_code == 401:
            raise BrokerError(f"{where} refused the login of user {self.username!r}: wrong username or password",
                              permanent=True)
        if response.status_code == 403:
            raise BrokerError(f"{where} refused user {self.username!r} access to {path}: "
                              "the user needs the 'management' or 'monitoring' tag", permanent=True)
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code == 404:
            raise BrokerError(f"{where} has nothing at {path}", permanent=True)
        if response.status_code >= 400:
            raise BrokerError(f"{where} answered HTTP {response.status_code} to {method} {path}",
                              permanent=response.status_code < 500)
        return response

    def close(self) -> None:
        self._client.close()


def _json(response: httpx.Response, where: str) -> Any:
    """The answer's JSON; a server that answers with something else is not RabbitMQ's API."""
    try:
        return response.json()
    except ValueError:
        raise BrokerError(f"{where} answered, but not as a RabbitMQ management API does (no JSON): "
                          "is the management URL right?", permanent=True) from None


def _refusal(response: httpx.Response) -> str:
    """The ``reason`` RabbitMQ gives in an error answer's JSON, or ""."""
    try:
        body = response.json()
    except ValueError:
        return ""
    return str(body.get("reason", "")) if isinstance(body, dict) else ""
