"""Finding 5: the credentials in a channel's target (a URL's userinfo, its query tokens, the
path of a Slack or Mattermost incoming webhook) reach no one: not the ``channel.added`` or
``channel.changed`` audit rows (which viewers read), not GET /api/notifications/channels/ as
an admin, not the Notifications page; they are shown as ``***``. Delivery still goes to the
whole target (a real loopback receiver gets the userinfo and the token), and a changed target
needs its credentials typed again, as a broker's password does."""

from __future__ import annotations

import base64
import json

import pytest
from django.apps import apps as django_apps
from rest_framework.test import APIClient

from console.access.roles import VIEWER, set_role
from console.models import AuditEvent, Channel
from console.notifications.delivery import deliver
from console.services.channels import notify_test

pytestmark = pytest.mark.django_db

SECRETS = ("hook-user", "pa55-w0rd", "t0ken-123", "T0AAA/B0BBB/sl4ckS3cret", "sl4ckS3cret", "m4ttermostK3y")
SLACK = "https://hooks.slack.com/services/T0AAA/B0BBB/sl4ckS3cret"


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _port(http) -> int:
    return http.server.server_address[1]


def _basic_url(http) -> str:
    return f"http://hook-user:pa55-w0rd@127.0.0.1:{_port(http)}/hook?token=t0ken-123&team=ops"


def _assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, secret


@pytest.fixture
def channels(admin, http):
    """Three channels added through the API by an admin: a webhook with userinfo and a token, a
    Slack incoming webhook, a Mattermost one (its key in the path)."""
    api = _api(admin)
    made = {}
    for name, kind, target in (("basic", "webhook", _basic_url(http)), ("slack", "slack", SLACK),
                               ("mattermost", "slack", f"http://127.0.0.1:{_port(http)}/hooks/m4ttermostK3y")):
        answer = api.post("/api/notifications/channels/", {"name": name, "kind": kind, "target": target},
                          format="json")
        assert answer.status_code == 201, answer.content
        _assert_no_secret(answer.content.decode())
        made[name] = Channel.objects.get(pk=answer.json()["id"])
    return made


def test_the_list_shows_credentials_as_stars_even_to_an_admin(admin, channels, http):
    answer = _api(admin).get("/api/notifications/channels/")
    assert answer.status_code == 200
    _assert_no_secret(answer.content.decode())
    shown = {row["name"]: (row["target"], row["target_has_credentials"]) for row in answer.json()}
    assert shown == {
        "basic": (f"http://***@127.0.0.1:{_port(http)}/hook?token=***&team=***", True),
        "slack": ("https://hooks.slack.com/***", True),
        "mattermost": (f"http://127.0.0.1:{_port(http)}/hooks/***", True),
    }


def test_the_audit_rows_keep_no_credentials_for_anyone(admin, channels, django_user_model):
    rows = AuditEvent.objects.filter(action="channel.added")
    assert rows.count() == 3
    for row in rows:
        _assert_no_secret(json.dumps(row.details))
        _assert_no_secret(row.target + row.reason)
    vera = django_user_model.objects.create_user("vera")
    set_role(vera, VIEWER)
    for reader in (vera, admin):
        answer = _api(reader).get("/api/audit/", {"action": "channel.added"})
        assert answer.status_code == 200, answer.content
        assert "hooks.slack.com/***" in answer.content.decode()
        _assert_no_secret(answer.content.decode())


def test_the_notifications_page_shows_no_credentials(admin, channels, client):
    client.force_login(admin)
    page = client.get("/notifications/")
    assert page.status_code == 200
    assert "hooks.slack.com/***" in page.content.decode()
    _assert_no_secret(page.content.decode())


def test_a_delivery_still_reaches_the_whole_url(admin, channels, http):
    for name in ("basic", "mattermost"):
        assert deliver(notify_test(channels[name], actor=admin).pk) == "sent"
    basic, mattermost = http.requests
    assert basic["path"] == "/hook?token=t0ken-123&team=ops"
    assert basic["headers"]["Authorization"] == "Basic " + base64.b64encode(b"hook-user:pa55-w0rd").decode()
    assert mattermost["path"] == "/hooks/m4ttermostK3y"


def test_a_changed_target_needs_its_credentials_typed_again(admin, channels, http):
    api, channel = _api(admin), channels["basic"]
    url = f"/api/notifications/channels/{channel.pk}/"
    moved = channel.target.replace(str(_port(http)), "9")
    refused = api.patch(url, {"target": moved}, format="json")
    assert refused.status_code == 400, refused.content
    assert "type its credentials again" in refused.json()["detail"]

    kept = api.patch(url, {"target": channel.target, "name": "basic-renamed"}, format="json")
    assert kept.status_code == 200, kept.content
    assert Channel.objects.get(pk=channel.pk).delivery_target == _basic_url(http)

    retyped = api.patch(url, {"target": "https://other:n3w-pa55@hooks.example.com/in?sig=n3w-s1g"}, format="json")
    assert retyped.status_code == 200, retyped.content
    assert retyped.json()["target"] == "https://***@hooks.example.com/in?sig=***"
    assert Channel.objects.get(pk=channel.pk).delivery_target == "https://other:n3w-pa55@hooks.example.com/in?sig=n3w-s1g"
    changed = [json.dumps(row.details) for row in AuditEvent.objects.filter(action="channel.changed")]
    assert len(changed) == 2
    for text in changed:
        _assert_no_secret(text)
        assert "n3w-pa55" not in text and "n3w-s1g" not in text


def test_the_migration_moves_existing_credentials_into_the_encrypted_field(admin):
    from importlib import import_module

    migration = import_module("console.migrations.0033_channel_target_credentials")
    old = Channel.objects.create(name="old", kind="slack", target=SLACK, created_by="ada")  # as saved before
    plain = Channel.objects.create(name="plain", kind="email", target="ops@example.com", created_by="ada")
    migration.move_credentials(django_apps, None)
    old.refresh_from_db()
    plain.refresh_from_db()
    assert (old.target, old.delivery_target) == ("https://hooks.slack.com/***", SLACK)
    assert "sl4ckS3cret" not in old.target_credentials_encrypted
    assert (plain.target, plain.target_credentials_encrypted) == ("ops@example.com", "")
