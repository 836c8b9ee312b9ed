"""``?state=`` on the letters is parsed, not trusted: states among held, replaying, replayed,
failed and purged (comma separated), or ``any``; another word is a 400 naming the parameter,
not a filter that silently matches nothing."""

from __future__ import annotations

import pytest

from console.models import DeadLetter, LetterState
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _ids(api, query: str) -> set[int]:
    answer = api.get(f"/api/letters/{query}")
    assert answer.status_code == 200, answer.content
    return {row["id"] for row in answer.json()["results"]}


def test_states_any_and_unknown_words(api, memory_broker):
    place = memory_place(memory_broker)
    held, failed = store_letter(place, b"{}"), store_letter(place, b"[]")
    DeadLetter.objects.filter(pk=failed.pk).update(state=LetterState.FAILED)
    assert _ids(api, "?state=held") == {held.pk}
    assert _ids(api, "?state=held,failed") == {held.pk, failed.pk}
    assert _ids(api, "?state=any") == {held.pk, failed.pk}
    refused = api.get("/api/letters/?state=helld")
    assert refused.status_code == 400 and "state" in refused.json()["detail"]
