"""Real receivers on loopback for the notification tests: an HTTP server (webhooks, Slack's
incoming webhooks) that can fail its first requests, and an SMTP server (aiosmtpd)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller


class HttpReceiver:
    """Records every POST (path, headers, body); answers 500 to the first ``fail_first``."""

    def __init__(self, fail_first: int = 0) -> None:
        self.requests: list[dict] = []
        self.fail_first = fail_first
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                failing = len(receiver.requests) <= receiver.fail_first
                self.send_response(500 if failing else 200)
                self.end_headers()
                self.wfile.write(b"down for now" if failing else b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def json(self) -> list[dict]:
        return [json.loads(request["body"]) for request in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class SmtpReceiver:
    """aiosmtpd on a free loopback port; ``messages`` holds (recipients, content) of each mail."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], str]] = []
        receiver = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's name
                receiver.messages.append((list(envelope.rcpt_tos), envelope.content.decode("utf-8", "replace")))
                return "250 OK"

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def close(self) -> None:
        self.controller.stop()
