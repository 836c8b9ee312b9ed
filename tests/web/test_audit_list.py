"""The audit page: newest first, filtered by actor and action, paged by id."""

from __future__ import annotations

import re

import pytest
from django.db import transaction
from django.urls import reverse

from console.models import AuditEvent
from console.services import audit
from console.web.paging import PAGE_SIZE

pytestmark = pytest.mark.django_db


def _record(n: int, actor: str, action: str) -> None:
    with transaction.atomic():
        for i in range(n):
            audit.record(action, actor=actor, reason=f"{actor} {action} {i}")


def _reasons(response) -> list[str]:
    return re.findall(r"<td>(\w+ [\w.]+ \d+)</td>", response.content.decode())


def test_newest_first_with_filters(signed_in):
    _record(2, "olga", "replay")
    _record(2, "ivan", "purge")
    assert _reasons(signed_in.get(reverse("audit"))) == ["ivan purge 1", "ivan purge 0", "olga replay 1",
                                                         "olga replay 0"]
    assert _reasons(signed_in.get(reverse("audit"), {"actor": "olga"})) == ["olga replay 1", "olga replay 0"]
    assert _reasons(signed_in.get(reverse("audit"), {"action": "purge"})) == ["ivan purge 1", "ivan purge 0"]


def test_older_pages_follow_by_id(signed_in):
    _record(PAGE_SIZE + 2, "olga", "replay")
    first = signed_in.get(reverse("audit"), {"actor": "olga"})
    assert len(_reasons(first)) == PAGE_SIZE
    oldest_shown = AuditEvent.objects.order_by("-id")[PAGE_SIZE - 1].pk
    assert f'href="?actor=olga&amp;before={oldest_shown}"' in first.content.decode()
    second = signed_in.get(reverse("audit"), {"actor": "olga", "before": oldest_shown})
    assert _reasons(second) == ["olga replay 1", "olga replay 0"]
