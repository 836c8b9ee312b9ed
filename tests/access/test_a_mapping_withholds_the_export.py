"""Issue 48: a role mapping can withhold the export right. Contractors mapped to operator without
``export_letters`` act on letters but get 403 from every export; a second group giving the same
role without withholding it gives it back (the widest mapping wins, as with limits); leaving that
group takes it away again at the next sign-in, audited. The environment's mapping file says the
same with ``withhold``; a right that cannot be withheld is refused."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from console.access.claims import check_mapping, decide, mapping_rules
from console.access.roles import ACT, EXPORT, has
from console.env import ConfigError
from console.models import AuditEvent
from console.services.claim_mappings import MappingRefused, do_set_mapping
from console.services.claims import access_from_claims
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db
ISSUER = "https://idp.example.test"


def _sign_in(groups):
    return access_from_claims({"sub": "c-1", "preferred_username": "casey", "groups": groups},
                              issuer=ISSUER, via="sign-in").user


def _exports(user) -> int:
    client = APIClient()
    client.force_authenticate(user)
    return client.get("/api/letters/export/", {"format": "jsonl"}).status_code


def test_contractors_act_but_do_not_export(memory_broker):
    store_letter(memory_place(memory_broker), b"{}")
    do_set_mapping(actor="tests", group="contractors", role="operator", withhold=["export_letters"])
    do_set_mapping(actor="tests", group="orders-team", role="operator")

    user = _sign_in(["contractors"])
    assert has(user, ACT) and not has(user, EXPORT)
    assert _exports(user) == 403
    user = _sign_in(["contractors", "orders-team"])
    assert has(user, EXPORT) and _exports(user) == 200
    user = _sign_in(["contractors"])
    assert not has(user, EXPORT)
    event = AuditEvent.objects.filter(action="access.from_claims").order_by("-id").first()
    assert event.details["after"]["withheld"] == ["export_letters"] and event.details["before"]["withheld"] == []

    with pytest.raises(MappingRefused):
        do_set_mapping(actor="tests", group="x", role="viewer", withhold=["purge_letters"])


def test_the_mapping_file_withholds_too(settings):
    settings.DLO_OIDC_ROLE_MAPPING = json.dumps([{"group": "contractors", "role": "operator",
                                                  "withhold": ["export_letters"]}])
    assert decide(["contractors"], mapping_rules()).withheld == ("export_letters",)
    with pytest.raises(ConfigError, match="withhold"):
        check_mapping(json.dumps([{"group": "g", "role": "viewer", "withhold": ["manage_users"]}]))
