"""Changing an audit row directly is detected by verify_audit, and the application cannot
update, delete or truncate audit rows: the database refuses (triggers from migrations 0002
and 0006). There is no separate database role: the triggers are the guard, and a role that
owns the table could switch them off, which the hash chain then tells (tests below)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from console.models import AuditEvent
from console.services import audit

pytestmark = pytest.mark.django_db


@pytest.fixture
def events():
    for number in range(4):
        with transaction.atomic():
            audit.record("job.requested", actor="olga", reason=f"reason {number}", count=number)
    return list(AuditEvent.objects.order_by("id"))


def _verify() -> str:
    out = StringIO()
    call_command("verify_audit", stdout=out)
    return out.getvalue()


def _sql_refused(sql: str, params=()) -> str:
    with pytest.raises(DatabaseError) as refused, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
    return str(refused.value)


def test_plain_sql_cannot_update_delete_or_truncate_the_audit(events):
    assert "append-only" in _sql_refused("UPDATE console_auditevent SET reason = 'nothing happened'")
    assert "append-only" in _sql_refused("DELETE FROM console_auditevent WHERE id = %s", [events[0].id])
    with transaction.atomic():
        with connection.cursor() as cursor:
            # The test database lets the test runner empty tables; the console's does not.
            cursor.execute("SET LOCAL dlo.allow_audit_truncate = 'off'")
        assert "TRUNCATE of console_auditevent is refused" in _sql_refused("TRUNCATE console_auditevent CASCADE")
    assert AuditEvent.objects.count() == 4
    assert _verify().strip() == "audit chain verified: 4 events"


def test_a_row_changed_or_removed_behind_the_triggers_is_named(events):
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE console_auditevent DISABLE TRIGGER USER")
        cursor.execute("UPDATE console_auditevent SET count = 999 WHERE id = %s", [events[2].id])
    with pytest.raises(CommandError, match=rf"broken at event {events[2].id}: its content does not match"):
        _verify()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE console_auditevent SET count = %s WHERE id = %s", [events[2].count, events[2].id])
        cursor.execute("DELETE FROM console_auditevent WHERE id = %s", [events[1].id])
        cursor.execute("ALTER TABLE console_auditevent ENABLE TRIGGER USER")
    with pytest.raises(CommandError, match=rf"broken at event {events[2].id}: its link to the previous event"):
        _verify()
