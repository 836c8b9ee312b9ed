"""The MCP server over Streamable HTTP at ``/mcp/`` on the console itself (stateless, JSON
answers), served by the web process beside Django: console.wsgi hands it the requests under
``/mcp``. The SDK's transport is ASGI; a2wsgi runs it on an event loop of its own thread, where
the transport's session manager lives for the life of the process.

A request for a host the console does not answer to (ALLOWED_HOSTS) is refused as Django
refuses its own. Every request names its caller by its ``Authorization`` header, as the API's do (a DRF token, or
the identity provider's bearer token): one without credentials the API accepts is refused with
401 before the MCP server reads it. Each token has its own session (its rate and its audit row,
written every AUDIT_EVERY calls or AUDIT_SECONDS, whichever comes first)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from a2wsgi import ASGIMiddleware
from django.conf import settings
from django.db import connections, transaction
from django.http.request import split_domain_port, validate_host
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings

from console.agents.accounts import account_of
from console.agents.api import Api
from console.agents.server import Session, build
from console.services import audit

#: A token's session is written to the audit after this many calls, or this long.
AUDIT_EVERY = 50
AUDIT_SECONDS = 600

_lock = threading.Lock()
_app: Any = None
_sessions: dict[str, tuple[Session, float]] = {}


def dispatched(django: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """The web process's WSGI application: ``/mcp`` to the MCP server, the rest to Django."""

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/mcp" or path.startswith("/mcp/"):
            return _mcp(environ, start_response)
        return django(environ, start_response)

    return application


def _mcp(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    domain, _ = split_domain_port(environ.get("HTTP_HOST") or environ.get("SERVER_NAME", ""))
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):  # as Django answers its own URLs
        start_response("400 Bad Request", [("Content-Type", "application/json")])
        return [b'{"detail": "this host is not one the console answers to (ALLOWED_HOSTS)"}']
    authorization = environ.get("HTTP_AUTHORIZATION", "")
    try:
        known = bool(authorization) and account_of(authorization) is not None
    finally:
        connections.close_all()
    if not known:
        start_response("401 Unauthorized", [("Content-Type", "application/json"),
                                            ("WWW-Authenticate", 'Token realm="api", Bearer realm="api"')])
        return [b'{"detail": "the MCP server takes the API\'s credentials: Authorization: Token <key> '
                b'(or Bearer <the identity provider\'s access token>)"}']
    return _started()(environ, start_response)


def _started() -> Any:
    """The transport's WSGI face, made once per process with its loop and session manager."""
    global _app
    with _lock:
        if _app is None:
            server = build(None, None, caller=_caller)
            # The host was checked against ALLOWED_HOSTS above, as Django checks its own requests.
            asgi: Any = server.streamable_http_app(
                stateless_http=True, json_response=True, streamable_http_path="/mcp/",
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="mcp-http", daemon=True).start()
            ready = threading.Event()

            async def held() -> None:
                async with server.session_manager.run():
                    ready.set()
                    await asyncio.Event().wait()

            asyncio.run_coroutine_threadsafe(held(), loop)
            ready.wait(30)
            _app = ASGIMiddleware(asgi, loop=loop)
        return _app


def _caller(ctx: Context) -> tuple[Api, Session]:
    request = ctx.request_context.request
    authorization = request.headers.get("authorization", "") if request is not None else ""
    with _lock:
        session, since = _sessions.get(authorization) or (Session(), time.monotonic())
        _sessions[authorization] = (session, since)
    total = sum(session.calls.values()) + sum(session.refused.values())
    if total >= AUDIT_EVERY or (total and time.monotonic() - since >= AUDIT_SECONDS):
        _write(authorization, session)
    return Api(authorization), session


def _write(authorization: str, session: Session) -> None:
    """The token's calls so far as one audit row; its counts start again."""
    account = account_of(authorization)
    with _lock:
        calls, refused = dict(session.calls), dict(session.refused)
        session.calls.clear()
        session.refused.clear()
        _sessions[authorization] = (session, time.monotonic())
    if account is not None and (calls or refused):
        with transaction.atomic():
            audit.record("mcp.session", actor=account, target="http", count=sum(calls.values()),
                         details={"via": "mcp", "calls": calls, "refused": refused})
