"""An operator adds the local RabbitMQ from the browser: fills the form, tests the connection
(the page shows RabbitMQ's version without reloading), saves, and finds the broker in the
inventory and on its own page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from console.models import AuditEvent, Broker
from tests.web.brokers_helpers import rabbit_version

# Brokers and purges are the admin's (console.access.roles).
pytestmark = [pytest.mark.browser, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True),
              pytest.mark.role("admin")]


def test_fill_test_and_save_a_rabbitmq_broker(signed_in_page, screenshot, live_server):
    page = signed_in_page
    page.goto("/")
    page.get_by_text("Settings", exact=True).click()  # the settings pages are in its menu
    page.get_by_role("link", name="Add broker").click()
    expect(page.get_by_role("heading", name="Add a broker")).to_be_visible()

    management = page.get_by_label("Management URL")
    url = page.get_by_label("URL", exact=True)
    page.get_by_label("Kind").select_option("redis")
    expect(management).to_be_hidden()  # only kinds that use one ask for it
    expect(url).to_have_attribute("placeholder", "redis://host:6379/0")  # each kind's example, from its adapter
    page.get_by_label("Kind").select_option("rabbitmq")
    expect(management).to_be_visible()
    expect(url).to_have_attribute("placeholder", "amqp://host:5672/%2F")
    expect(page.get_by_text("RabbitMQ's management API, e.g. http://host:15672")).to_be_visible()

    page.get_by_label("Name", exact=True).fill("local-rabbit")
    url.fill("amqp://127.0.0.1:5672/%2F")
    management.fill("http://127.0.0.1:15672")
    page.get_by_label("Username").fill("guest")
    page.get_by_label("Password").fill("guest")
    page.get_by_role("button", name="Test connection").click()
    expect(page.get_by_role("status")).to_have_text(f"Connected: version {rabbit_version()}.")
    expect(page).to_have_url(f"{live_server.url}/brokers/new/")
    assert not Broker.objects.exists(), "testing saves nothing"
    screenshot(page, "brokers_new")

    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="local-rabbit")).to_be_visible()
    expect(page.get_by_text(f"version {rabbit_version()}").first).to_be_visible()
    assert Broker.objects.get(name="local-rabbit").password == "guest"
    assert AuditEvent.objects.filter(action="broker.add").count() == 1

    screenshot(page, "brokers_detail")

    page.get_by_role("link", name="Inventory").first.click()
    page.get_by_role("link", name="local-rabbit").click()
    expect(page.get_by_role("heading", name="local-rabbit")).to_be_visible()
    assert page.watch.errors == [] and page.watch.dialogs == []
