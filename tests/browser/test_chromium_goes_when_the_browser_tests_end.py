"""Chromium, and the event loop Playwright's sync API runs in the test thread, go as soon as the
next test does not use the browser: a later test on the same worker of a parallel run may run
its own coroutines with ``asyncio.run`` (which a running loop refuses) and is checked for
async-unsafe ORM calls again."""

from __future__ import annotations

import asyncio
import os

import pytest

pytestmark = [pytest.mark.browser]


def test_a_browser_test_runs_with_the_loop_in_its_thread(browser):
    page = browser.new_page()
    page.set_content("<p>one</p>")
    assert page.text_content("p") == "one"
    refused = asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="running event loop"):
        asyncio.run(refused)  # Playwright's loop is running here while the browser lives
    refused.close()
    page.close()


def test_the_next_test_without_the_browser_runs_its_own_coroutines():
    assert asyncio.run(asyncio.sleep(0, result="ran")) == "ran"
    assert os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE") is None
