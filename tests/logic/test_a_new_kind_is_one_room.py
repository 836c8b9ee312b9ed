"""A new kind of job is one room: a module that declares its surface and its runner
(tests/kinds_for_tests/copy_kind.py, which no file under console/ names), once registered, is
offered in the place page's action menu with its own fields, is described by the API schema,
goes through the preview and the confirm, and its job is made by the one door and run by its
own runner, audited like any other."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from drf_spectacular import plumbing

from console.jobs.door.runner import run_job
from console.jobs.kinds import register, unregister
from console.models import AuditEvent, DeadLetter, Job
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def copy_kind():
    register("copy", "tests.kinds_for_tests.copy_kind.Copy")
    _forget_enum_names()
    yield
    unregister("copy")
    _forget_enum_names()


def _forget_enum_names() -> None:
    """drf-spectacular names the job kinds' enum from the registry's choices once per process."""
    plumbing._load_enum_name_overrides.cache_clear()


@pytest.fixture
def place(memory_broker):
    fake, _ = memory_broker
    fake.queue("orders.copies")
    return memory_place(memory_broker)


@pytest.fixture
def letters(place):
    return [store_letter(place, f"order {i}".encode()) for i in range(3)]


def test_the_place_page_offers_the_new_kind_with_its_own_fields(copy_kind, signed_in, place, letters):
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert '<option value="copy">Copy to a queue</option>' in html
    note = re.search(r'<div class="field" data-shown-for-action="([^"]*)">\s*<label for="action_note">', html)
    assert note is not None and note.group(1).split() == ["copy"]
    target = re.search(r'<div class="field" data-shown-for-action="([^"]*)">\s*<label for="action_target">', html)
    assert target is not None and set(target.group(1).split()) == {"move", "copy"}


def test_without_it_registered_the_page_does_not_offer_it(signed_in, place, letters):
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert 'value="copy"' not in html and 'name="note"' not in html


def test_the_api_schema_describes_the_new_kind(copy_kind, signed_in):
    schema = signed_in.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = schema["components"]["schemas"]
    create_ref = schema["paths"]["/api/jobs/"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    create = components[create_ref.rsplit("/", 1)[1]]
    assert "copy" in components[create["properties"]["action"]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert create["properties"]["note"]["description"] == "Set as each copy's x-dlo-note header"
    assert "copy" in components["JobKindEnum"]["enum"]


def test_preview_confirm_door_and_runner(copy_kind, signed_in, memory_broker, place, letters):
    fake, _ = memory_broker
    chosen = [letters[0].pk, letters[2].pk]
    preview = signed_in.post(reverse("action-preview", args=[place.pk]),
                             {"action": "copy", "target": "orders.copies", "note": "for the audit team",
                              "ids": chosen, "reason": ""})
    html = preview.content.decode()
    assert preview.status_code == 200 and not Job.objects.exists()
    assert "Preview: copy to a queue to <code>orders.copies</code>" in html
    assert '<strong id="preview-count">2</strong>' in html
    assert "Copy to a queue: 2 letters</button>" in html

    token = re.search(r'name="token" value="([^"]+)"', html).group(1)
    confirmed = signed_in.post(reverse("action-confirm"), {"token": token, "reason": "audit asked for copies"})
    job = Job.objects.get()
    assert confirmed.status_code == 302 and confirmed["Location"] == reverse("job", args=[job.pk])
    assert (job.kind, job.params, job.total) == ("copy", {"target": "orders.copies", "note": "for the audit team"}, 2)
    requested = AuditEvent.objects.get(action="job.requested")
    assert (requested.job_id, requested.details["kind"], requested.target) == (job.pk, "copy", "orders.copies")
    assert f"Job {job.pk}: Copy" in signed_in.get(confirmed["Location"]).content.decode()

    assert run_job(job.pk) == "succeeded"
    copies = list(fake.queue("orders.copies"))
    assert [(m.body, m.headers["x-dlo-note"]) for m in copies] == [(b"order 0", "for the audit team"),
                                                                    (b"order 2", "for the audit team")]
    assert set(DeadLetter.objects.values_list("state", flat=True)) == {"held"}
    assert sorted(AuditEvent.objects.filter(action="copy", outcome="confirmed").values_list("letter_ids", flat=True)) \
        == [[chosen[0]], [chosen[1]]]


def test_the_api_takes_a_job_of_the_new_kind_with_its_fields(copy_kind, signed_in, place, letters):
    response = signed_in.post("/api/jobs/", {"action": "copy", "letters": [letters[1].pk], "target": "orders.copies",
                                             "note": "via the API", "reason": "a copy for the auditors"},
                              content_type="application/json")
    assert response.status_code == 202, response.content
    assert (response.json()["kind"], response.json()["params"]) == ("copy", {"target": "orders.copies",
                                                                             "note": "via the API"})
    refused = signed_in.post("/api/jobs/", {"action": "copy", "letters": [letters[1].pk], "reason": "no target"},
                             content_type="application/json")
    assert refused.status_code == 400 and "a copy needs a target queue" in refused.content.decode()
