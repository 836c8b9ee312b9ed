"""Changing how the console reaches a broker: an empty password keeps the stored one, a new
one replaces it, the change is tested before it is saved, and the audit names what changed
without any secret's value."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from console.models import AuditEvent, Broker
from console.services.brokers import do_update_broker
from tests.web.brokers_helpers import SECRET, assert_secret_kept

# Brokers and purges are the admin's (console.access.roles).
pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]


@pytest.fixture
def guarded(memory_broker):
    """The in-memory broker wanting a password, and its row holding it."""
    fake, broker = memory_broker
    fake.password = "old-password"
    broker.password = "old-password"
    broker.save()
    return fake, broker


def edit(client, broker, **changes):
    values = {"url": broker.url, "management_url": "", "username": broker.username, "password": "", "options": "{}"}
    values.update(changes)
    return client.post(reverse("broker-edit", args=[broker.pk]), values)


def test_an_empty_password_keeps_the_stored_one(signed_in, guarded):
    fake, broker = guarded
    page = signed_in.get(reverse("broker-edit", args=[broker.pk])).content.decode()
    assert "old-password" not in page and "Leave empty to keep the stored password" in page

    response = edit(signed_in, broker, username="ops")
    assert response.status_code == 302
    broker.refresh_from_db()
    assert (broker.username, broker.password) == ("ops", "old-password")
    event = AuditEvent.objects.get(action="broker.update")
    assert event.details == {"changed": {"username": {"from": "", "to": "ops"}}}


def test_a_new_password_is_tested_before_it_replaces_the_old_one(signed_in, guarded):
    fake, broker = guarded
    refused = edit(signed_in, broker, password=SECRET)
    assert refused.status_code == 400
    assert "Not saved: the connection test failed." in refused.content.decode()
    assert Broker.objects.get(pk=broker.pk).password == "old-password"
    assert not AuditEvent.objects.filter(action="broker.update").exists()

    fake.password = SECRET  # the broker's password was changed on the broker first
    saved = edit(signed_in, broker, password=SECRET)
    assert saved.status_code == 302
    assert Broker.objects.get(pk=broker.pk).password == SECRET
    event = AuditEvent.objects.get(action="broker.update")
    assert event.details == {"changed": {"password": {"changed": True}}}
    assert_secret_kept(SECRET, refused, saved, signed_in.get(reverse("broker-edit", args=[broker.pk])))
    assert "old-password" not in json.dumps(list(AuditEvent.objects.values()), default=str)


def test_test_connection_on_the_edit_form_uses_the_stored_password_when_blank(signed_in, guarded):
    fake, broker = guarded
    url = reverse("broker-edit-test", args=[broker.pk])
    ok = signed_in.post(url, {"url": broker.url, "password": "", "options": "{}"}, HTTP_HX_REQUEST="true")
    assert "Connected: version memory." in ok.content.decode()
    wrong = signed_in.post(url, {"url": broker.url, "password": SECRET, "options": "{}"}, HTTP_HX_REQUEST="true")
    assert "Connection failed: access refused: wrong credentials" in wrong.content.decode()
    assert_secret_kept(SECRET, ok, wrong)


def test_credentials_pasted_into_a_new_url_are_split_off(guarded, operator):
    fake, broker = guarded
    do_update_broker(broker, actor=operator, url=f"memory://ops:{SECRET}@test")
    broker.refresh_from_db()
    assert (broker.url, broker.username, broker.password) == ("memory://test", "ops", SECRET)
    changed = AuditEvent.objects.get(action="broker.update").details["changed"]
    assert set(changed) == {"username", "password"}
    assert_secret_kept(SECRET)


def test_nothing_changed_writes_no_audit_row(guarded, operator):
    fake, broker = guarded
    do_update_broker(broker, actor=operator, url=broker.url, username="", password="")
    assert not AuditEvent.objects.filter(action="broker.update").exists()
