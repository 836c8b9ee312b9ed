"""An admin adds a webhook channel in the browser, subscribes a user to new failure groups, and
presses "Send a test": the receiver on loopback gets it once a delivery is sent, and the
delivery log on the page says so."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from console.models import Delivery, Subscription
from console.notifications.delivery import deliver
from tests.notifications.receivers import HttpReceiver

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.role("admin")]


def test_add_a_channel_subscribe_and_send_a_test(signed_in_page, screenshot):
    receiver = HttpReceiver()
    page = signed_in_page
    try:
        page.goto("/")
        page.get_by_text("Settings", exact=True).click()  # the settings pages are in its menu
        page.get_by_role("link", name="Notifications").click()
        form = page.get_by_role("form", name="New channel")
        form.get_by_label("Name").fill("ops")
        form.get_by_label("Kind").select_option("webhook")
        form.get_by_label("Target").fill(receiver.url)
        form.get_by_label("Secret").fill("hush")
        form.get_by_role("button", name="Add channel").click()
        expect(page.get_by_text("Channel 'ops' added.")).to_be_visible()

        subscribe = page.get_by_role("form", name="New subscription")
        subscribe.get_by_label("Channel").select_option(label="ops")
        subscribe.get_by_label("User").select_option("olga")
        subscribe.get_by_label("a new failure group").check()
        subscribe.get_by_role("button", name="Subscribe").click()
        expect(page.get_by_text("Subscription added.")).to_be_visible()
        assert Subscription.objects.get().events == ["group.new"]

        page.get_by_role("button", name="Send a test").click()
        expect(page.get_by_text("A test message to ops is on its way")).to_be_visible()
        (delivery,) = Delivery.objects.all()
        assert deliver(delivery.pk) == "sent"  # what the Celery worker does with it
        page.reload()
        expect(page.locator(f"#delivery-{delivery.pk} .status")).to_have_text("sent")
        screenshot(page, "notifications")
        assert receiver.json()[0]["event"] == "test" and "hush" not in page.content()
        assert not page.watch.errors and not page.watch.dialogs
    finally:
        receiver.close()
