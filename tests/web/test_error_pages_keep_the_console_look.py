"""With DEBUG off, 404, 500, 403, 400 and a CSRF refusal are the console's own pages (its style
sheet, its navigation for a signed-in reader), under its Content-Security-Policy: no inline
script or style. 500 renders without the request and without the database (which may be what
failed)."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory
from django.urls import reverse
from django.views import defaults

from console.security.headers import policy_text
from console.web.views import inventory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def debug_off(settings):
    """As in production: Django answers with the error pages, not its debug pages."""
    settings.DEBUG = False


def assert_console_page(html: str, heading: str) -> None:
    assert f"<h1>{heading}</h1>" in html
    assert "/static/css/console.css" in html
    assert "<style" not in html and " style=" not in html
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts and all('src="/static/' in attributes for attributes in scripts)


def test_a_missing_page_is_the_consoles_not_found_page(signed_in, settings):
    response = signed_in.get("/letters/999999999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert_console_page(html, "Not found")
    assert "/letters/999999999/" in html
    assert 'aria-label="Main"' in html  # the navigation of a signed-in reader
    assert response["Content-Security-Policy"] == policy_text(settings.DLO_CONTENT_SECURITY_POLICY)


def test_a_page_that_fails_answers_the_consoles_server_error_page(operator, monkeypatch, settings):
    def fails(user=None):
        raise RuntimeError("a bug in a page")

    monkeypatch.setattr(inventory, "inventory_rows", fails)
    client = Client(raise_request_exception=False)
    client.force_login(operator)
    response = client.get("/")
    assert response.status_code == 500
    assert_console_page(response.content.decode(), "Something broke")
    assert "a bug in a page" not in response.content.decode()
    assert response["Content-Security-Policy"] == policy_text(settings.DLO_CONTENT_SECURITY_POLICY)


def test_the_server_error_page_needs_no_database(django_assert_num_queries):
    request = RequestFactory().get("/")
    with django_assert_num_queries(0):
        response = defaults.server_error(request)
    assert response.status_code == 500
    assert_console_page(response.content.decode(), "Something broke")


def test_refused_and_unreadable_requests_get_the_consoles_pages():
    request = RequestFactory().get("/")
    forbidden = defaults.permission_denied(request, PermissionDenied())
    assert forbidden.status_code == 403
    assert_console_page(forbidden.content.decode(), "Not allowed")
    bad = defaults.bad_request(request, ValueError())
    assert bad.status_code == 400
    assert_console_page(bad.content.decode(), "Bad request")


def test_a_form_sent_without_its_token_gets_the_consoles_page(operator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.post(reverse("logout"))
    assert response.status_code == 403
    assert_console_page(response.content.decode(), "Form expired")
