""""Test connection" on the add-a-broker page tries the unsaved definition: it shows the
version the real RabbitMQ reports, or the clear reason it failed, and saves nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.models import AuditEvent, Broker
from tests.web.brokers_helpers import RABBIT, SECRET, assert_secret_kept, dead_port, rabbit_version

# Brokers and purges are the admin's (console.access.roles).
pytestmark = [pytest.mark.django_db, pytest.mark.rabbitmq, pytest.mark.role("admin")]


def test_a_working_definition_shows_the_rabbitmq_version(signed_in):
    response = signed_in.post(reverse("broker-test"), RABBIT, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert f"Connected: version {rabbit_version()}." in response.content.decode()
    assert not Broker.objects.exists()
    assert AuditEvent.objects.get().action == "broker.test"  # a test is audited, nothing else


def test_a_dead_port_shows_the_address_and_never_the_password(signed_in):
    port = dead_port()
    definition = {**RABBIT, "url": f"amqp://127.0.0.1:{port}/%2F", "password": SECRET}
    response = signed_in.post(reverse("broker-test"), definition, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "Connection failed: cannot reach RabbitMQ at" in html and f"127.0.0.1:{port}" in html
    assert_secret_kept(SECRET, response)
    assert not Broker.objects.exists()


def test_wrong_credentials_say_so_without_the_password(signed_in):
    response = signed_in.post(reverse("broker-test"), {**RABBIT, "password": SECRET}, HTTP_HX_REQUEST="true")
    assert "wrong username or password" in response.content.decode()
    assert_secret_kept(SECRET, response)


def test_credentials_pasted_into_the_url_are_used_and_not_echoed(signed_in):
    definition = {**RABBIT, "url": f"amqp://guest:{SECRET}@127.0.0.1:5672/%2F", "username": "", "password": ""}
    response = signed_in.post(reverse("broker-test"), definition, HTTP_HX_REQUEST="true")
    assert "wrong username or password" in response.content.decode()
    assert_secret_kept(SECRET, response)


def test_the_api_tests_an_unsaved_definition(signed_in):
    answer = signed_in.post("/api/brokers/test/", RABBIT, content_type="application/json")
    assert answer.status_code == 200
    assert answer.json()["ok"] is True and answer.json()["facts"]["version"] == rabbit_version()

    port = dead_port()
    failed = signed_in.post("/api/brokers/test/", {**RABBIT, "url": f"amqp://127.0.0.1:{port}/%2F",
                                                    "password": SECRET}, content_type="application/json")
    assert failed.status_code == 502
    assert failed.json()["permanent"] is False and f"127.0.0.1:{port}" in failed.json()["detail"]
    assert_secret_kept(SECRET, failed)
    assert not Broker.objects.exists()


def test_an_incomplete_definition_says_what_is_missing(signed_in):
    response = signed_in.post(reverse("broker-test"), {"kind": "rabbitmq", "url": ""}, HTTP_HX_REQUEST="true")
    assert "Connection failed: URL: This field is required." in response.content.decode()
