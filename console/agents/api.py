"""The console's API called in-process, with a caller's credentials: a request built as an HTTP
client would send it (its ``Authorization`` header), answered by the same Django handler as any
other (authentication, the URL policy, scopes, masking, throttles, the audit), without a socket.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler

from console import context

#: The one handler of this process (it loads the middleware once).
_handler: WSGIHandler | None = None


class ApiRefused(Exception):
    """The API answered with an error: its status and what it said (shown to the agent)."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(f"{status}: {detail}")
        self.status, self.detail = status, detail


@dataclass
class Api:
    """The API as ``authorization`` (an ``Authorization`` header's value) may use it; ``via``
    names the way in, which every audit row the call writes carries (console.context.via)."""

    authorization: str
    via: str = "mcp"

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._call("GET", path, params=params)

    def post(self, path: str, body: dict[str, Any] | None = None, params: dict[str, Any] | None = None) -> Any:
        return self._call("POST", path, params=params, body=body)

    def _call(self, method: str, path: str, *, params: dict[str, Any] | None = None,
              body: dict[str, Any] | None = None) -> Any:
        global _handler
        if _handler is None:
            _handler = WSGIHandler()
        data = json.dumps(body).encode() if body is not None else b""
        query = urlencode({k: v for k, v in (params or {}).items() if v not in (None, "")}, doseq=True)
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "SCRIPT_NAME": "",
            "SERVER_NAME": _host(), "SERVER_PORT": "443", "HTTP_HOST": _host(), "wsgi.url_scheme": "https",
            "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.input": io.BytesIO(data),
            "wsgi.errors": io.StringIO(), "wsgi.version": (1, 0), "wsgi.multithread": False,
            "wsgi.multiprocess": False, "wsgi.run_once": False, "CONTENT_LENGTH": str(len(data)),
            "CONTENT_TYPE": "application/json", "HTTP_ACCEPT": "application/json",
            "HTTP_AUTHORIZATION": self.authorization,
        }
        status: list[str] = []
        token = context.via.set(self.via)  # the audit rows of this call say so
        try:
            start: Any = lambda line, headers, exc_info=None: status.append(line)  # noqa: E731 - WSGI's callable
            chunks = _handler(environ, start)
            try:
                content = b"".join(chunks)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
        finally:
            context.via.reset(token)
        code = int(status[0].split()[0])
        answer = json.loads(content) if content else None
        if code >= 400:
            raise ApiRefused(code, answer.get("detail", answer) if isinstance(answer, dict) else answer)
        return answer


def _host() -> str:
    """A host the console answers to (ALLOWED_HOSTS' first exact name)."""
    return next((host for host in settings.ALLOWED_HOSTS if host and "*" not in host and not host.startswith(".")),
                "localhost")
