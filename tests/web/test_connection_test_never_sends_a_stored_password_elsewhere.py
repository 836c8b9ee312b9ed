""""Test connection" on a saved broker uses its stored password only where the broker was
saved: a form that names another management URL gets no stored secret (a real HTTP server on
127.0.0.1 records the Authorization header it is sent), must have the password typed again,
and says so. Every test is audited without the password, and what a foreign server answers is
told in our own words, never echoed."""

from __future__ import annotations

import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse

from console.models import AuditEvent, Broker
from console.services.brokers import do_add_broker
from tests.web.brokers_helpers import RABBIT, SECRET, assert_secret_kept

pytestmark = [pytest.mark.django_db, pytest.mark.rabbitmq, pytest.mark.role("admin")]

HOSTILE = "<b>remote-text-7c1e</b> stack trace of someone else's server"


class Recorder:
    """An HTTP server that notes every Authorization header and answers ``status``/``body``."""

    def __init__(self) -> None:
        self.authorizations: list[str | None] = []
        self.status, self.body = 500, HOSTILE.encode()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorder.authorizations.append(self.headers.get("Authorization"))
                self.send_response(recorder.status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(recorder.body)))
                self.end_headers()
                self.wfile.write(recorder.body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder():
    server = Recorder()
    yield server
    server.close()


@pytest.fixture
def saved_rabbit():
    """The real RabbitMQ, saved with its password (guest's, so that AMQP signs in first)."""
    return do_add_broker(actor="tests", name="rabbit", **RABBIT)


def _edit_form(broker: Broker, **changes) -> dict:
    return {"url": broker.url, "management_url": broker.management_url, "username": broker.username,
            "password": "", "options": "{}", **changes}


def _basic(password: str) -> str:
    return "Basic " + base64.b64encode(f"guest:{password}".encode()).decode()


def test_testing_a_saved_broker_against_another_management_url_sends_no_stored_password(
        signed_in, saved_rabbit, recorder):
    answer = signed_in.post(reverse("broker-edit-test", args=[saved_rabbit.pk]),
                            _edit_form(saved_rabbit, management_url=recorder.url), HTTP_HX_REQUEST="true")
    assert recorder.authorizations == []
    assert "type the password again" in answer.content.decode()
    event = AuditEvent.objects.get(action="broker.test")
    assert (event.actor_name, event.broker_name, event.outcome) == ("olga", "rabbit", "refused")
    assert event.details["management_url"] == recorder.url


def test_saving_another_management_url_without_the_password_is_refused(signed_in, saved_rabbit, recorder):
    answer = signed_in.post(reverse("broker-edit", args=[saved_rabbit.pk]),
                            _edit_form(saved_rabbit, management_url=recorder.url, save_anyway="on"))
    assert answer.status_code == 400 and "type the password again" in answer.content.decode()
    assert recorder.authorizations == []
    assert Broker.objects.get(pk=saved_rabbit.pk).management_url == RABBIT["management_url"]


def test_the_stored_password_still_serves_where_the_broker_was_saved(signed_in, saved_rabbit):
    answer = signed_in.post(reverse("broker-edit-test", args=[saved_rabbit.pk]), _edit_form(saved_rabbit),
                            HTTP_HX_REQUEST="true")
    assert "Connected: version" in answer.content.decode()
    assert AuditEvent.objects.get(action="broker.test").outcome == "connected"


def test_a_typed_password_may_go_elsewhere_and_what_answers_is_not_echoed(signed_in, saved_rabbit, recorder):
    form = _edit_form(saved_rabbit, management_url=recorder.url, password="guest")
    failed = signed_in.post(reverse("broker-edit-test", args=[saved_rabbit.pk]), form, HTTP_HX_REQUEST="true")
    assert recorder.authorizations == [_basic("guest")]  # the admin typed it for this server
    page = failed.content.decode()
    assert f"the RabbitMQ management API at {recorder.url} answered HTTP 500" in page
    assert "remote-text-7c1e" not in page

    recorder.status, recorder.body = 200, HOSTILE.encode()
    not_rabbit = signed_in.post(reverse("broker-edit-test", args=[saved_rabbit.pk]), form, HTTP_HX_REQUEST="true")
    page = not_rabbit.content.decode()
    assert "not as a RabbitMQ management API does" in page and "remote-text-7c1e" not in page
    assert [e.outcome for e in AuditEvent.objects.filter(action="broker.test")] == ["failed", "failed"]
    assert "remote-text-7c1e" not in str(list(AuditEvent.objects.values()))


def test_an_unsaved_definition_tried_through_the_api_is_audited_without_its_password(signed_in, recorder):
    answer = signed_in.post("/api/brokers/test/", {**RABBIT, "management_url": recorder.url, "password": SECRET},
                            content_type="application/json")
    assert answer.status_code == 502 and "remote-text-7c1e" not in answer.content.decode()
    event = AuditEvent.objects.get(action="broker.test")
    assert (event.actor_name, event.details["broker"], event.outcome) == ("olga", "unsaved", "failed")
    assert_secret_kept(SECRET, answer)
