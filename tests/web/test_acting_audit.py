"""The audit page: filters, links to letters and jobs, and CSV/JSON exports of the filtered events."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from console.jobs.door.requests import request_job
from console.models import AuditEvent
from console.services import audit
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def _record(action, **kwargs):
    with transaction.atomic():
        return audit.record(action, **kwargs)


@pytest.fixture
def events(place, operator):
    letters = [store_letter(place, f"order {i}".encode()).pk for i in range(2)]  # one "capture" event each
    job = request_job("mark_failed", actor=operator, reason="won't fix", ids=letters)
    hostile = _record("note", actor="=HYPERLINK(\"http://evil\")", reason="+SUM(1,2)", ticket="@cmd",
                      target="-2+3", details={"x": "<script>alert(1)</script>"})
    return {"letters": letters, "job": job, "hostile": hostile}


def _export(client, fmt, **params):
    response = client.get(reverse(f"audit-export-{fmt}"), params)
    assert response.status_code == 200 and response.streaming
    return b"".join(response.streaming_content).decode()


def test_filters_by_actor_action_place_job_letter_and_time(signed_in, events, place):
    def shown(**params):
        html = signed_in.get(reverse("audit"), params).content.decode()
        return {int(i) for i in __import__("re").findall(r'<tr id="event-(\d+)">', html)}

    everything = set(AuditEvent.objects.values_list("id", flat=True))
    assert shown() == everything
    assert shown(actor="olga") == set(AuditEvent.objects.filter(actor_name="olga").values_list("id", flat=True))
    assert shown(action="capture") == set(AuditEvent.objects.filter(action="capture").values_list("id", flat=True))
    assert len(shown(action="capture")) == 2
    at_place = set(AuditEvent.objects.filter(place_name=place.name).values_list("id", flat=True))
    assert len(at_place) == 4  # the place appearing, the captures, and the job on letters of that place alone
    assert shown(place=place.name) == at_place
    assert shown(place="elsewhere.dlq") == set()
    assert shown(job=events["job"].pk) == {AuditEvent.objects.get(action="job.requested").pk}
    assert shown(letter=events["letters"][0]) == set(
        AuditEvent.objects.filter(letter_ids__contains=[events["letters"][0]]).values_list("id", flat=True))
    future = (timezone.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    assert shown(since=future) == set() and shown(until=future) == everything


def test_each_event_links_to_its_letters_and_its_job(signed_in, events):
    requested = AuditEvent.objects.get(action="job.requested")
    html = signed_in.get(reverse("audit")).content.decode()
    assert f'href="/letters/?event={requested.pk}"' in html and f'href="/jobs/{events["job"].pk}/"' in html
    listed = signed_in.get(reverse("letters"), {"event": requested.pk}).content.decode()
    assert all(f'href="/letters/{pk}/"' in listed for pk in events["letters"])
    by_ids = signed_in.get(reverse("letters"), {"ids": f"{events['letters'][1]},x"}).content.decode()
    assert f'href="/letters/{events["letters"][1]}/"' in by_ids
    assert f'href="/letters/{events["letters"][0]}/"' not in by_ids


def test_csv_export_has_the_filtered_events_and_defuses_formulas(signed_in, events):
    rows = list(csv.DictReader(io.StringIO(_export(signed_in, "csv"))))
    assert [int(r["id"]) for r in rows] == list(AuditEvent.objects.order_by("-id").values_list("id", flat=True))
    hostile = rows[0]
    assert hostile["actor"] == "'=HYPERLINK(\"http://evil\")" and hostile["reason"] == "'+SUM(1,2)"
    assert hostile["ticket"] == "'@cmd" and hostile["target"] == "'-2+3"
    assert json.loads(hostile["details"]) == {"x": "<script>alert(1)</script>"}

    only = list(csv.DictReader(io.StringIO(_export(signed_in, "csv", action="job.requested"))))
    assert len(only) == 1 and only[0]["letter_ids"] == " ".join(map(str, events["letters"]))
    assert only[0]["job"] == str(events["job"].pk) and only[0]["reason"] == "won't fix"


def test_json_export_has_the_filtered_events(signed_in, events):
    data = json.loads(_export(signed_in, "json", actor="olga"))
    assert [e["id"] for e in data] == list(
        AuditEvent.objects.filter(actor_name="olga").order_by("-id").values_list("id", flat=True))
    requested = next(e for e in data if e["action"] == "job.requested")
    assert requested["letter_ids"] == events["letters"] and requested["job"] == events["job"].pk
    assert json.loads(_export(signed_in, "json", actor="nobody")) == []


def test_exports_walk_the_audit_in_chunks(signed_in, events, monkeypatch):
    from console.web.views import audit as audit_view

    monkeypatch.setattr(audit_view, "EXPORT_CHUNK", 2)
    data = json.loads(_export(signed_in, "json"))
    assert len(data) == AuditEvent.objects.count() == len({e["id"] for e in data})


@pytest.mark.parametrize("moment", ["2026-01-01T00:00+20:00", "2026-01-01T00:00-15:30", "not a time"])
def test_any_date_the_filter_accepts_is_one_the_database_can_compare(signed_in, moment):
    response = signed_in.get(reverse("audit"), {"since": moment, "until": moment})
    assert response.status_code == 200
