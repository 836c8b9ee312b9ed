"""Playwright (sync API) driving Debian's Chromium against pytest-django's live server.

Never ``playwright install``: the browser is the system's /usr/bin/chromium. Jobs are not
sent to Celery: the tests run them with console.jobs.door.runner.run_job from the test thread, and
the page must notice by itself (htmx polling).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


class _Chromium:
    """One Chromium for a run of browser tests, stopped as soon as the next test is not one.

    Playwright's sync API keeps an event loop running in the thread that started it, and a
    worker of a parallel run goes on to other tests after its browser tests: with the loop still
    running there, their ``asyncio.run`` would be refused. So Chromium (and the loop) lives while
    browser tests follow one another, not for the whole session."""

    def __init__(self) -> None:
        self.playwright = None
        self.chromium = None
        self.async_unsafe: str | None = None

    def get(self):
        if self.chromium is None:
            from playwright.sync_api import sync_playwright

            # The ORM calls the tests make from this thread are still plain synchronous calls.
            self.async_unsafe = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
            self.playwright = sync_playwright().start()
            self.chromium = self.playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        return self.chromium

    def stop(self) -> None:
        if self.playwright is None:
            return
        try:
            if self.chromium is not None:
                self.chromium.close()
        finally:
            self.playwright.stop()
            self.playwright = self.chromium = None
            if self.async_unsafe is None:
                os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
            else:
                os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = self.async_unsafe


_CHROMIUM = _Chromium()


@pytest.fixture
def browser():
    return _CHROMIUM.get()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a browser test's own fixtures are torn down: Chromium goes when the next test
    does not use it (or there is none)."""
    yield
    if nextitem is None or "browser" not in nextitem.fixturenames:
        _CHROMIUM.stop()


class PageWatch:
    """What the page did that it must not: dialogs opened, console errors, uncaught errors."""

    def __init__(self, page) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("console", lambda msg: msg.type == "error" and self.errors.append(msg.text))
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture
def queued_jobs(monkeypatch):
    """Job ids the services hand to Celery; none reach a worker."""
    from console.jobs import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.run_job, "delay", queued.append)
    return queued


@pytest.fixture
def page(browser, live_server, queued_jobs):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1366, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.watch = PageWatch(page)
    yield page
    context.close()


@pytest.fixture
def signed_in_page(page, operator, live_server):
    """The page with olga's session cookie already set (signing in itself has its own test)."""
    session = SessionStore()
    session[SESSION_KEY] = str(operator.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = operator.get_session_auth_hash()
    session.save()
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session.session_key,
                               "url": live_server.url}])
    return page


@pytest.fixture
def screenshot():
    """Save a full-page screenshot under test-artifacts/screenshots/ (git-ignored)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def save(page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save


@pytest.fixture
def place(memory_broker):
    from tests.web.factory import memory_place

    return memory_place(memory_broker)
