"""Issue 46: pages show names where they showed ids: a job's filter names its place with its
broker (the id beside it), and a rule's scope names the place and its broker."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.jobs.door.requests import request_job
from console.services.rules.changes import do_create_rule
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def test_a_jobs_filter_names_its_place(signed_in, operator, place):
    store_letter(place, b"{}")
    job = request_job("mark_failed", actor=operator, reason="give up", filter={"place": place.pk})
    html = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert f"<code>place={place.broker.name} / {place.name} (#{place.pk})</code>" in html


def test_a_rules_scope_names_its_place_and_broker(signed_in, operator, place):
    do_create_rule(actor=operator, name="hold", match={"origin": "orders"}, action={"kind": "hold"},
                   scope={"place": place.pk})
    html = signed_in.get(reverse("rules")).content.decode()
    assert f"<td>{place.broker.name} / {place.name}</td>" in html and f"place {place.pk}<" not in html
