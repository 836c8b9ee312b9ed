"""Admins change roles on the Roles page, audited; the new role applies at the next request."""

from __future__ import annotations

import pytest

from console.access.roles import role_of
from console.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_an_admin_makes_a_viewer_an_operator_and_takes_the_role_away(people, signed_in_as):
    vera = people["viewer"]
    assert signed_in_as(vera).post("/jobs/1/cancel/").status_code == 403
    admin = signed_in_as(people["admin"])
    page = admin.get("/roles/").content.decode()
    assert f'<td id="role-of-{vera.pk}">viewer</td>' in page
    assert admin.post(f"/roles/{vera.pk}/", {"role": "operator", "reason": "on call"}).status_code == 302
    vera.refresh_from_db()
    assert role_of(vera) == "operator"
    assert signed_in_as(vera).get("/roles/").status_code == 403
    assert signed_in_as(vera).post("/jobs/1/cancel/").status_code == 404  # allowed now; no such job
    admin = signed_in_as(people["admin"])
    assert admin.post(f"/roles/{vera.pk}/", {"role": ""}).status_code == 302
    assert signed_in_as(vera).get("/").status_code == 403
    events = [(e.actor_name, e.target, e.reason, e.details) for e in AuditEvent.objects.filter(action="grant_role")
              .order_by("id")]
    assert events == [("ada", "vera", "on call", {"before": "viewer", "after": "operator"}),
                      ("ada", "vera", "", {"before": "operator", "after": ""})]


def test_an_unknown_role_changes_nothing(people, signed_in_as):
    vera = people["viewer"]
    answer = signed_in_as(people["admin"]).post(f"/roles/{vera.pk}/", {"role": "root"}, follow=True)
    assert "There is no role" in answer.content.decode()
    assert role_of(vera) == "viewer" and not AuditEvent.objects.filter(action="grant_role").exists()
