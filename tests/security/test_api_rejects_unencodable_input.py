"""JSON that no field could store (a string with an unpaired surrogate, an integer beyond 64
bits, a number too large for a float) is refused with a 400 that says why, on every API
operation, before any serializer or service sees it; nothing is stored. It used to be a 500
wherever a field did not look (a broker's options, an edit's headers)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, Broker

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


@pytest.mark.parametrize("path, body", [
    ("/api/places/{place}/shovel/", f'{{"target": {SURROGATE}, "reason": "r"}}'),
    ("/api/letters/{letter}/edit-replay/", f'{{"headers": {{"x-n": {BIG_INT}}}, "reason": "r"}}'),
    ("/api/letters/{letter}/edit-replay/", f'{{"headers": {{"x-s": {SURROGATE}}}, "reason": "r"}}'),
    ("/api/jobs/", f'{{"action": "replay", "letters": [{BIG_INT}], "reason": "r"}}'),
    ("/api/jobs/preview/", f'{{"filter": {{"q": {SURROGATE}}}}}'),
])
def test_every_operation_refuses_it_at_the_door(api, place, path, body):
    from tests.web.factory import store_letter

    letter = store_letter(place, b"{}")
    before = AuditEvent.objects.count()
    answer = _post(api, path.format(place=place.pk, letter=letter.pk), body)
    assert answer.status_code == 400 and answer.json()["detail"].startswith("JSON parse error - ")
    assert AuditEvent.objects.count() == before
