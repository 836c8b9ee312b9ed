"""add_broker keeps the password encrypted: not in the database row, the audit or the output."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError
from django.db import connection

from console.management.cli import os_user
from console.models import AuditEvent, Broker

pytestmark = pytest.mark.django_db

SECRET = "Tr1age-s3cret-9f4e"


def _raw_row(name: str) -> str:
    """Every column of the broker's row as PostgreSQL holds it, as one text."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT row_to_json(b)::text FROM console_broker b WHERE name = %s", [name])
        return cursor.fetchone()[0]


def test_password_in_the_url_is_taken_out_and_stored_encrypted(manage):
    printed = manage(
        "add_broker", "prod-rabbit", "--kind", "rabbitmq",
        "--url", f"amqp://ops:{SECRET}@127.0.0.1:5672/",
        "--management-url", "http://127.0.0.1:15672/",
    )
    broker = Broker.objects.get(name="prod-rabbit")
    assert broker.url == "amqp://127.0.0.1:5672/"
    assert broker.username == "ops"
    assert broker.password == SECRET  # decrypts with the configured key
    row = _raw_row("prod-rabbit")
    assert SECRET not in row and broker.password_encrypted in row
    # The real RabbitMQ refuses these credentials; neither that warning nor anything else shows them.
    assert "did not answer" in printed.err
    assert SECRET not in printed.all
    event = AuditEvent.objects.get(action="broker.add")
    assert event.actor_name == f"cli:{os_user()}"
    assert SECRET not in str(event.content())


def test_password_file_is_read_and_stored_encrypted(manage, tmp_path):
    from console.access.roles import ADMIN, set_role

    set_role(User.objects.create_user("ops-bot"), ADMIN)  # --actor names a user whose role allows it
    secret_file = tmp_path / "rabbit-password"
    secret_file.write_text(SECRET + "\n")
    printed = manage(
        "add_broker", "guest-rabbit", "--url", "amqp://127.0.0.1:5672/", "--username", "guest",
        "--password-file", str(secret_file), "--no-check", "--actor", "ops-bot",
    )
    broker = Broker.objects.get(name="guest-rabbit")
    assert broker.kind == "rabbitmq" and broker.password == SECRET
    assert SECRET not in _raw_row("guest-rabbit")
    assert "password kept encrypted" in printed.out and SECRET not in printed.all
    assert AuditEvent.objects.get(action="broker.add").actor_name == "ops-bot"


def test_real_rabbitmq_with_right_credentials_answers(manage):
    printed = manage(
        "add_broker", "local", "--url", "amqp://guest:guest@127.0.0.1:5672/",
        "--management-url", "http://guest:guest@127.0.0.1:15672/",
    )
    assert "local answers (version " in printed.out
    assert Broker.objects.get(name="local").reachable is True


def test_a_second_broker_with_the_same_name_is_refused(manage):
    manage("add_broker", "mem", "--kind", "memory", "--url", "memory://x")
    with pytest.raises(CommandError, match="exists already"):
        manage("add_broker", "mem", "--kind", "memory", "--url", "memory://y")
    assert Broker.objects.count() == 1
