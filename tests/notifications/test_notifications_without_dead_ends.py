"""Issue 46: notifications without dead ends. With no channel the page says to add one first;
a channel can be edited and deleted from the page and through the API (audited, its
subscriptions and delivery log going with it); a delivery being retried says so, once."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models import AuditEvent, Channel, Delivery, Subscription
from console.services.channels import do_add_channel, do_subscribe

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_page(client, admin):
    client.force_login(admin)
    return client


def test_with_no_channel_the_page_says_to_add_one_first(admin_page):
    html = admin_page.get(reverse("notifications")).content.decode()
    assert "add a channel above first" in html and 'aria-label="New subscription"' not in html


def test_a_channel_is_edited_and_deleted_from_the_page(admin_page, admin):
    channel = do_add_channel(actor=admin, name="ops", kind="webhook", target="http://127.0.0.1:9/hook")
    do_subscribe(actor=admin, channel=channel, events=["job.failed"], user=admin)
    html = admin_page.get(reverse("notifications")).content.decode()
    assert f'action="{reverse("channel-change", args=[channel.pk])}"' in html

    admin_page.post(reverse("channel-change", args=[channel.pk]),
                    {"name": "ops-night", "target": "http://127.0.0.1:9/night", "enabled": "on"})
    channel.refresh_from_db()
    assert (channel.name, channel.target) == ("ops-night", "http://127.0.0.1:9/night")
    changed = AuditEvent.objects.get(action="channel.changed")
    assert changed.details["changed"]["name"] == {"from": "ops", "to": "ops-night"}

    admin_page.post(reverse("channel-change", args=[channel.pk]), {"delete": "yes"})
    assert not Channel.objects.exists() and not Subscription.objects.exists()
    deleted = AuditEvent.objects.get(action="channel.deleted")
    assert deleted.details["name"] == "ops-night" and deleted.details["subscriptions"] == 1


def test_a_channel_is_deleted_through_the_api(admin_page, admin):
    channel = do_add_channel(actor=admin, name="ops", kind="webhook", target="http://127.0.0.1:9/hook")
    assert admin_page.delete(f"/api/notifications/channels/{channel.pk}/").status_code == 204
    assert not Channel.objects.exists() and AuditEvent.objects.filter(action="channel.deleted").exists()


def test_an_operator_may_neither_edit_nor_delete_a_channel(client, operator, admin):
    channel = do_add_channel(actor=admin, name="ops", kind="webhook", target="http://127.0.0.1:9/hook")
    client.force_login(operator)
    assert client.post(reverse("channel-change", args=[channel.pk]), {"delete": "yes"}).status_code == 403
    assert client.delete(f"/api/notifications/channels/{channel.pk}/").status_code == 403
    assert Channel.objects.filter(pk=channel.pk).exists()


def test_a_delivery_being_retried_has_one_status(admin_page, admin):
    channel = do_add_channel(actor=admin, name="ops", kind="webhook", target="http://127.0.0.1:9/hook")
    delivery = Delivery.objects.create(channel=channel, event="channel.test", subject="a test", status="pending",
                                       send_after=timezone.now(),
                                       attempts=[{"outcome": "failed", "error": "ConnectError"}])
    row = admin_page.get(reverse("notifications")).content.decode()
    row = row[row.index(f'id="delivery-{delivery.pk}"'):]
    row = row[:row.index("</tr>")]
    assert '<td class="status">retrying</td>' in row and "pending" not in row
