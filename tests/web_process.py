"""``gunicorn console.wsgi``, the web process as deployed, on a loopback port for a test: started
with the environment it is given, waited for until it answers, stopped afterwards."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.workers import PROJECT, test_database_url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(log_path: Path, *gunicorn_args: str, **env: str) -> Iterator[str]:
    """The web process on the test database (``env`` overrides and adds variables); its base URL."""
    port = free_port()
    environ = {**os.environ, "DATABASE_URL": test_database_url(), "DJANGO_SETTINGS_MODULE": "console.settings",
               **env}
    with log_path.open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "console.wsgi", "--bind", f"127.0.0.1:{port}",
                                    "--workers", "1", *gunicorn_args], cwd=PROJECT, env=environ, stdout=log,
                                   stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/sign-in/", timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    raise AssertionError(log_path.read_text()[-3000:]) from None
                time.sleep(0.2)
        try:
            yield base
        finally:
            process.terminate()
            process.wait(30)
