"""verify_audit walks the hash chain and names the first event changed behind the console's back."""

from __future__ import annotations

import pytest
from django.core.management import CommandError
from django.db import DatabaseError, connection, transaction

from console.models import AuditEvent
from console.services.brokers import do_add_broker

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_events():
    for name in ("one", "two", "three"):
        do_add_broker(actor="olga", name=name, kind="memory", url=f"memory://{name}")
    return list(AuditEvent.objects.order_by("id"))


def test_an_untouched_chain_verifies(three_events, manage):
    assert manage("verify_audit").out.strip() == "audit chain verified: 3 events"


def test_a_row_changed_in_the_database_is_named(three_events, manage):
    tampered = three_events[1]
    with connection.cursor() as cursor:
        # The append-only trigger refuses UPDATE; someone with the table owner's rights can
        # switch it off. The hash chain still tells.
        cursor.execute("ALTER TABLE console_auditevent DISABLE TRIGGER console_audit_append_only")
        cursor.execute("UPDATE console_auditevent SET actor_name = 'nobody' WHERE id = %s", [tampered.id])
        cursor.execute("ALTER TABLE console_auditevent ENABLE TRIGGER console_audit_append_only")
    with pytest.raises(CommandError, match=rf"broken at event {tampered.id}: its content does not match") as err:
        manage("verify_audit")
    assert err.value.returncode == 1  # the exit status of `manage.py verify_audit`


def test_the_database_refuses_to_update_or_delete_audit_rows(three_events):
    event = three_events[0]
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).update(reason="rewritten")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).delete()
    assert AuditEvent.objects.get(pk=event.pk).reason == event.reason
