"""What the MCP tests share: the console's web process as deployed."""

from __future__ import annotations

import pytest

from tests.web_process import serving


@pytest.fixture
def web(tmp_path):
    """``gunicorn console.wsgi`` on a loopback port, on the test database; its base URL."""
    with serving(tmp_path / "gunicorn.log", "--threads", "4") as base:
        yield base
