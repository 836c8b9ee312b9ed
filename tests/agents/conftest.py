"""What the MCP tests share: the console's web process as deployed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from tests.workers import PROJECT, test_database_url


@pytest.fixture
def web(tmp_path):
    """``gunicorn console.wsgi`` on a loopback port; its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "DATABASE_URL": test_database_url(), "DJANGO_SETTINGS_MODULE": "console.settings"}
    log = (tmp_path / "gunicorn.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", "console.wsgi", "--bind", f"127.0.0.1:{port}",
                                "--workers", "1", "--threads", "4"], cwd=PROJECT, env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{base}/sign-in/", timeout=2)
            break
        except httpx.TransportError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError((tmp_path / "gunicorn.log").read_text()[-3000:]) from None
            time.sleep(0.2)
    yield base
    process.terminate()
    process.wait(30)
    log.close()


