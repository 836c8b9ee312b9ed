"""Issue 46: the audit names what changed. A group's rows (status, note) say which group, by its
fingerprint and title, in the audit's Where; a rule's rows name the rule."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.models import AuditEvent
from console.services.group_work import do_add_note, do_update_group
from console.services.rules.changes import do_create_rule
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def test_a_groups_rows_name_it_in_the_audits_where(signed_in, operator, place):
    letter = store_letter(place, b"{}", exception_type="PaymentDeclined", exception_message="card expired")
    do_update_group(letter.fingerprint, actor=operator, status="investigating", reason="looking")
    do_add_note(letter.fingerprint, actor=operator, text="the card processor is down")
    for action in ("group.changed", "group.note"):
        (event,) = AuditEvent.objects.filter(action=action)
        assert event.target == f"failure group {letter.fingerprint} (PaymentDeclined)"
    html = signed_in.get(reverse("audit")).content.decode()
    assert html.count(f"→ failure group {letter.fingerprint} (PaymentDeclined)") == 2


def test_a_rules_rows_name_the_rule(operator, place):
    do_create_rule(actor=operator, name="give up on KeyError", match={"exception_type": "KeyError"},
                          action={"kind": "mark_failed"}, scope={"place": place.pk})
    (event,) = AuditEvent.objects.filter(action="rule.created")
    assert event.target == "rule give up on KeyError" and event.place_name == place.name
