"""Adding a broker from the browser: Save tests the connection first, refuses a broker that
does not answer unless "save anyway" is ticked, never shows the typed password again, and
audits the addition without it."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.models import AuditEvent, Broker
from tests.web.brokers_helpers import RABBIT, SECRET, assert_secret_kept, dead_port, rabbit_version

# Brokers and purges are the admin's (console.access.roles).
pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]


def password_input(html: str) -> str:
    (tag,) = re.findall(r"<input[^>]*name=\"password\"[^>]*>", html)
    return tag


def test_the_form_offers_real_kinds_and_a_password_field_that_keeps_nothing(signed_in, settings):
    settings.DEBUG = False
    html = signed_in.get(reverse("broker-new")).content.decode()
    for kind in ("rabbitmq", "activemq", "nats", "redis"):
        assert f'<option value="{kind}"' in html
    assert '<option value="memory"' not in html
    tag = password_input(html)
    assert 'type="password"' in tag and 'autocomplete="off"' in tag and "value=" not in tag
    assert 'data-management-url data-kinds="rabbitmq"' in html
    assert f'hx-post="{reverse("broker-test")}"' in html

    settings.DEBUG = True
    assert '<option value="memory"' in signed_in.get(reverse("broker-new")).content.decode()


@pytest.mark.rabbitmq
def test_save_tests_the_connection_then_adds_the_broker_audited(signed_in, operator):
    response = signed_in.post(reverse("broker-new"), {"name": "orders-rabbit", **RABBIT})
    broker = Broker.objects.get(name="orders-rabbit")
    assert response.status_code == 302 and response.url == reverse("broker", args=[broker.pk])
    assert broker.password == "guest" and broker.reachable is True and broker.version == rabbit_version()
    event = AuditEvent.objects.get(action="broker.add")
    assert event.actor_name == operator.username and event.details["username"] == "guest"
    assert "guest" not in str(event.details.get("url"))

    page = signed_in.get(response.url)
    assert f"version {rabbit_version()}" in page.content.decode()
    inventory = signed_in.get(reverse("inventory")).content.decode()
    assert "orders-rabbit" in inventory


@pytest.mark.rabbitmq
def test_a_broker_that_does_not_answer_is_not_saved_and_the_password_not_echoed(signed_in):
    port = dead_port()
    definition = {"name": "typo", **RABBIT, "url": f"amqp://127.0.0.1:{port}/%2F", "password": SECRET}
    response = signed_in.post(reverse("broker-new"), definition)
    html = response.content.decode()
    assert response.status_code == 400
    assert "Not saved: the connection test failed." in html and f"127.0.0.1:{port}" in html
    assert "value=" not in password_input(html)
    assert f'value="amqp://127.0.0.1:{port}/%2F"' in html  # the rest of the form is kept
    assert not Broker.objects.exists()
    assert [(e.action, e.outcome) for e in AuditEvent.objects.all()] == [("broker.test", "failed")]
    assert_secret_kept(SECRET, response)


@pytest.mark.rabbitmq
def test_save_anyway_adds_a_broker_that_does_not_answer_and_says_so(signed_in):
    port = dead_port()
    definition = {"name": "later", **RABBIT, "url": f"amqp://127.0.0.1:{port}/%2F", "password": SECRET,
                  "save_anyway": "on"}
    response = signed_in.post(reverse("broker-new"), definition, follow=True)
    broker = Broker.objects.get(name="later")
    assert broker.password == SECRET and broker.reachable is False
    html = response.content.decode()
    assert "Saved later, but it did not answer" in html and "unreachable" in html
    assert AuditEvent.objects.filter(action="broker.add").count() == 1
    assert_secret_kept(SECRET, response)


def test_bad_input_is_refused_with_the_reason(signed_in, settings):
    settings.DEBUG = True
    response = signed_in.post(reverse("broker-new"), {"name": "x y", "kind": "memory", "url": "not a url",
                                                     "options": "[1, 2]", "password": SECRET})
    html = response.content.decode()
    assert response.status_code == 400
    assert "Options must be a JSON object" in html and "Enter a valid" in html
    assert not Broker.objects.exists()
    assert_secret_kept(SECRET, response)


def test_a_name_in_use_is_refused_after_the_test(signed_in, memory_broker, settings):
    settings.DEBUG = True
    response = signed_in.post(reverse("broker-new"), {"name": "mem", "kind": "memory", "url": "memory://test"})
    assert response.status_code == 400
    assert "a broker named &#x27;mem&#x27; exists already" in response.content.decode()
    assert Broker.objects.count() == 1
