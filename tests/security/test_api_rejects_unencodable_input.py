"""JSON that no field could store (a string with an unpaired surrogate, an integer beyond 64
bits, a number too large for a float) is refused with a 400 that says why, on every API
operation, before any serializer or service sees it; nothing is stored. It used to be a 500
wherever a field did not look (a broker's options, an edit's headers)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, Broker
from tests.web.factory import uploaded_mapping, uploaded_schema

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]

SURROGATE = '"\\ud92b#%"'  # JSON text: a high surrogate with no low one after it
SURROGATE_KEY = '{"\\udc00": 1}'
BIG_INT = "123456789012345678901234567890"
HUGE_FLOAT = "1e400"


@pytest.fixture
def api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


def _post(api, path: str, json_text: str):
    return api.post(path, data=json_text, content_type="application/json")


@pytest.mark.parametrize("options", [f'{{"a": {SURROGATE}}}', SURROGATE_KEY, f'{{"a": {BIG_INT}}}',
                                     f'{{"a": [{HUGE_FLOAT}]}}'])
def test_a_broker_with_unstorable_options_is_refused(api, options):
    answer = _post(api, "/api/brokers/", f'{{"name": "odd", "kind": "memory", "url": "memory://odd", '
                                         f'"options": {options}}}')
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("JSON parse error - ")
    assert not Broker.objects.filter(name="odd").exists()
    assert not AuditEvent.objects.filter(action="broker.add", broker_name="odd").exists()


def test_the_refusal_names_the_problem(api):
    surrogate = _post(api, "/api/brokers/test/", f'{{"kind": "memory", "url": {SURROGATE}}}')
    big = _post(api, "/api/brokers/test/", f'{{"kind": "memory", "url": "memory://x", "options": {{"n": {BIG_INT}}}}}')
    assert "cannot be encoded as UTF-8" in surrogate.json()["detail"]
    assert "more than 64 bits" in big.json()["detail"]
    assert not AuditEvent.objects.filter(action="broker.test").exists()  # refused before any test


def test_every_operation_with_a_body_refuses_it_at_the_door(api, place, operator):
    """Every operation the OpenAPI document gives a JSON body, including any added later."""
    from drf_spectacular.generators import SchemaGenerator

    from tests.web.factory import store_letter

    job = api.post(f"/api/places/{place.pk}/capture/", {"reason": "a job to name"}, format="json").json()
    from console.models import Origin
    from console.services.channels import do_add_channel
    from console.services.objectives import do_set_objective
    from console.services.redaction import do_set_redaction_rule
    from console.services.rules import do_create_rule
    from console.services.saved_views import do_save_view

    letter = store_letter(place)
    ids = {"broker_id": place.broker_id, "place_id": place.pk, "letter_id": letter.pk,
           "fingerprint": letter.fingerprint,
           "job_id": job["id"], "origin_id": Origin.objects.get().pk,
           "rule_id": do_create_rule(actor="tests", name="a rule to name", action={"kind": "hold"}).pk,
           "redaction_rule_id": do_set_redaction_rule(actor="tests", kind="regex", pattern=r"\d{16}").pk,
           "channel_id": do_add_channel(actor="tests", name="ops", kind="webhook", target="http://127.0.0.1:9/h").pk,
           "view_id": do_save_view(actor=operator, name="a view to name", filter={}).pk,
           "objective_id": do_set_objective(actor=operator, name="an hour", kind="oldest", seconds=3600,
                                            place=place).pk,
           "body_schema_id": uploaded_schema().pk, "body_mapping_id": uploaded_mapping().pk}
    before = AuditEvent.objects.count()
    checked = []
    for path, methods in SchemaGenerator().get_schema(request=None, public=True)["paths"].items():
        for method, operation in methods.items():
            if "application/json" not in operation.get("requestBody", {}).get("content", {}):
                continue
            for body in (f'{{"reason": {SURROGATE}, "x": {SURROGATE}}}', f'{{"reason": "r", "x": {BIG_INT}}}'):
                answer = api.generic(method.upper(), path.format(**ids), body, content_type="application/json")
                assert answer.status_code == 400, (method, path, answer.content)
                assert answer.json()["detail"].startswith("JSON parse error - "), (method, path)
            checked.append(f"{method.upper()} {path}")
    assert {"POST /api/brokers/", "POST /api/places/{place_id}/shovel/", "POST /api/jobs/",
            "POST /api/letters/{letter_id}/edit-replay/"} <= set(checked)
    assert AuditEvent.objects.count() == before
