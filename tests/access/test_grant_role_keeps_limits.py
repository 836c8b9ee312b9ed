"""Changing a limited user's role keeps their limits, by command and on the Roles page; only
``grant_role --clear-limits`` lifts them; every change is audited with what it was before (issue
16, finding 10)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from console.access.roles import role_of
from console.models import AuditEvent, RoleScope

pytestmark = pytest.mark.django_db


def _grant(*args: str) -> str:
    out = StringIO()
    call_command("grant_role", *args, "--actor", "ada", stdout=out, stderr=StringIO())
    return out.getvalue()


def _places_seen(client) -> set[str]:
    return {place["name"] for place in client.get("/api/places/").json()}


def test_grant_role_without_limits_keeps_them(places_a_and_b, signed_in_as):
    otto = places_a_and_b.otto
    printed = _grant("otto", "admin", "--reason", "on call")
    assert "otto is now admin, limited to mem:orders.dlq" in printed
    assert role_of(otto) == "admin"
    assert _places_seen(signed_in_as(otto)) == {"orders.dlq"}
    granted = AuditEvent.objects.get(action="grant_role")
    assert (granted.actor_name, granted.target, granted.details) == ("ada", "otto", {"before": "operator",
                                                                                     "after": "admin"})


def test_clear_limits_lifts_them_audited(places_a_and_b, signed_in_as):
    otto = places_a_and_b.otto
    assert "otto is now operator\n" in _grant("otto", "operator", "--clear-limits", "--reason", "lead")
    assert not RoleScope.objects.filter(user=otto).exists()
    assert _places_seen(signed_in_as(otto)) == {"orders.dlq", "billing.dlq"}
    cleared = AuditEvent.objects.get(action="grant_scope")
    assert (cleared.reason, cleared.details) == ("lead", {"brokers": [], "places": [],
                                                          "before": ["mem:orders.dlq"]})


def test_new_limits_replace_the_old_ones_and_clearing_with_limits_is_refused(places_a_and_b):
    otto = places_a_and_b.otto
    with pytest.raises(CommandError, match="--clear-limits"):
        _grant("otto", "operator", "--clear-limits", "--place", "mem:billing.dlq")
    assert list(RoleScope.objects.filter(user=otto).values_list("place__name", flat=True)) == ["orders.dlq"]
    assert "limited to mem:billing.dlq" in _grant("otto", "operator", "--place", "mem:billing.dlq")
    changed = AuditEvent.objects.get(action="grant_scope")
    assert changed.details == {"brokers": [], "places": ["mem:billing.dlq"], "before": ["mem:orders.dlq"]}


def test_the_roles_page_changes_the_role_and_keeps_the_limits(places_a_and_b, people, signed_in_as):
    otto = places_a_and_b.otto
    admin = signed_in_as(people["admin"])
    assert admin.post(f"/roles/{otto.pk}/", {"role": "viewer", "reason": "read only now"}).status_code == 302
    assert role_of(otto) == "viewer"
    assert "mem:orders.dlq" in signed_in_as(people["admin"]).get("/roles/").content.decode()
    assert _places_seen(signed_in_as(otto)) == {"orders.dlq"}
    assert AuditEvent.objects.get(action="grant_role").details == {"before": "operator", "after": "viewer"}
