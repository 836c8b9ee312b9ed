"""Issue 47: failure groups may take their key from a body's field. An admin's mapping names a
group path; the letters it names (JSON bodies here, held before the mapping and stored after it)
form one group per value, counted so by the counts the database keeps and listed so by the API,
each group showing its key; letters of other places, and a letter without the field, keep their
exception's group. Deleting the mapping joins them again. The path is checked when the mapping is
made, and an admin limited to some places splits only theirs."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from console.access.roles import ADMIN, set_role
from console.models import AuditEvent, DeadLetter, RoleScope
from console.services.groups import Among, failure_groups
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db(transaction=True)  # the held letters are regrouped after the commit


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _payment(place, provider: str | None, n: int) -> DeadLetter:
    body = {"id": n, **({"provider": provider} if provider else {})}
    return store_letter(place, json.dumps(body).encode(), exception_type="PaymentDeclined",
                        exception_message=f"payment {n} declined")


def test_a_mapping_splits_the_groups_by_a_body_field(memory_broker, admin):
    payments, others = memory_place(memory_broker, "payments"), memory_place(memory_broker, "others")
    held = [_payment(payments, "stripe", 1), _payment(payments, "adyen", 2), _payment(others, "stripe", 3)]
    api = _client(admin)
    (before,) = api.get("/api/groups/").json()
    assert (before["count"], before["key"]) == (3, "")

    made = api.post("/api/body-mappings/", {"place": payments.pk, "group_path": "$.provider",
                                            "reason": "one group per provider"}, format="json")
    assert made.status_code == 201, made.content
    assert AuditEvent.objects.get(action="body_mapping.created").details["group_path"] == "$.provider"
    stored = [_payment(payments, "stripe", 4), _payment(payments, None, 5)]  # stored after: split at once

    by_key = {row["key"]: row["count"] for row in api.get("/api/groups/").json()}
    assert by_key == {'$.provider = "stripe"': 2, '$.provider = "adyen"': 1, "": 2}
    envelope = held[2].fingerprint  # the other place's letter and the one without a provider
    assert set(DeadLetter.objects.filter(fingerprint=envelope).values_list("pk", flat=True)) == {
        held[2].pk, stored[1].pk}
    counted = {g.key: g.count for g in failure_groups({"place": payments.pk}, Among(admin))}  # from the counts
    assert counted == {'$.provider = "stripe"': 2, '$.provider = "adyen"': 1, "": 1}

    assert api.delete(f"/api/body-mappings/{made.json()['id']}/", {"reason": "together again"},
                      format="json").status_code == 204
    (after,) = api.get("/api/groups/").json()
    assert (after["count"], after["key"], after["fingerprint"]) == (5, "", envelope)


def test_a_group_path_is_checked_and_kept_to_the_admins_places(memory_broker, admin, django_user_model):
    mine, theirs = memory_place(memory_broker, "mine"), memory_place(memory_broker, "theirs")
    api = _client(admin)
    for given, said in (({"place": mine.pk, "group_path": "$.a[", "reason": "r"}, "group path"),
                        ({"place": mine.pk, "group_path": "$.items[*].sku", "reason": "r"}, "names one value"),
                        ({"place": mine.pk, "reason": "r"}, "a format, a group path, or both"),
                        ({"place": mine.pk, "message_type": "shop.Order", "group_path": "$.a", "reason": "r"},
                         "needs its format")):
        answer = api.post("/api/body-mappings/", given, format="json")
        assert answer.status_code == 400 and said in answer.json()["detail"], answer.content

    limited = django_user_model.objects.create_user("lim", password="lim-pass-123")
    set_role(limited, ADMIN)
    RoleScope.objects.create(user=limited, place=mine)
    limited_api = _client(limited)
    assert limited_api.post("/api/body-mappings/", {"place": mine.pk, "group_path": "$.provider", "reason": "r"},
                            format="json").status_code == 201
    assert limited_api.post("/api/body-mappings/", {"place": theirs.pk, "group_path": "$.provider", "reason": "r"},
                            format="json").status_code == 404
    assert limited_api.post("/api/body-mappings/", {"origin": "orders", "group_path": "$.provider", "reason": "r"},
                            format="json").status_code == 403
