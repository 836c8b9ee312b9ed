"""Issue 33: the groups-claim mapping, through its page (/roles/groups/) and its API
(/api/claim-mappings/), as an admin, a viewer and an admin limited to one place: every change
audited; a viewer changes nothing; the limited admin reads and makes only mappings within their
place, and a refusal is audited; a mapping from the environment is shown and never changed."""

from __future__ import annotations

import json

import pytest

from console.access.roles import ADMIN, set_role
from console.models import AuditEvent, ClaimMapping, RoleScope
from console.services.claim_mappings import do_set_mapping
from console.services.claims import access_from_claims

pytestmark = pytest.mark.django_db


@pytest.fixture
def adam(places_a_and_b, django_user_model):
    """An admin limited to place A."""
    adam = django_user_model.objects.create_user("adam")
    set_role(adam, ADMIN)
    RoleScope.objects.create(user=adam, place=places_a_and_b.a)
    return adam


def post_api(client, data):
    return client.post("/api/claim-mappings/", json.dumps(data), content_type="application/json")


def test_an_admin_maps_a_group_on_the_page_and_through_the_api(places_a_and_b, people, signed_in_as):
    admin = signed_in_as(people["admin"])
    answer = admin.post("/roles/groups/", {"group": "orders-team", "role": "operator",
                                           "places": [places_a_and_b.a.pk], "reason": "new team"})
    assert answer.status_code == 302
    page = admin.get("/roles/groups/").content.decode()
    assert "orders-team" in page and "mem:orders.dlq" in page
    made = post_api(admin, {"group": "dlo-admins", "role": "admin", "reason": "ops"})
    assert made.status_code == 200 and made.json()["limits"] == [] and made.json()["defined_in"].startswith("console #")
    listed = {row["group"]: row for row in admin.get("/api/claim-mappings/").json()}
    assert listed["orders-team"]["role"] == "operator" and listed["orders-team"]["limits"] == ["mem:orders.dlq"]
    assert admin.delete("/api/claim-mappings/?group=dlo-admins&reason=gone").status_code == 204
    assert admin.post("/roles/groups/", {"delete": "orders-team"}).status_code == 302
    assert not ClaimMapping.objects.exists()
    actions = list(AuditEvent.objects.filter(action__startswith="claim_mapping.").order_by("id")
                   .values_list("action", "reason"))
    assert actions == [("claim_mapping.set", "new team"), ("claim_mapping.set", "ops"),
                       ("claim_mapping.delete", "gone"), ("claim_mapping.delete", "")]


def test_a_viewer_reads_and_changes_nothing(places_a_and_b, people, signed_in_as):
    do_set_mapping(actor="tests", group="orders-team", role="operator")
    viewer = signed_in_as(people["viewer"])
    assert viewer.get("/roles/groups/").status_code == 403
    assert viewer.get("/api/claim-mappings/").status_code == 403
    assert post_api(viewer, {"group": "mine", "role": "admin"}).status_code == 403
    assert viewer.post("/roles/groups/", {"delete": "orders-team"}).status_code == 403
    assert list(ClaimMapping.objects.values_list("group", flat=True)) == ["orders-team"]


def test_an_admin_limited_to_one_place_stays_within_it(places_a_and_b, people, adam, signed_in_as):
    a, b = places_a_and_b.a, places_a_and_b.b
    do_set_mapping(actor="tests", group="billing-team", role="operator", places=[b])
    do_set_mapping(actor="tests", group="everyone", role="viewer")
    limited = signed_in_as(adam)
    page = limited.get("/roles/groups/").content.decode()
    assert "billing" not in page and "everyone" not in page  # mappings beyond A are not shown
    assert [row["group"] for row in limited.get("/api/claim-mappings/").json()] == []
    assert post_api(limited, {"group": "orders-team", "role": "operator", "places": [a.pk]}).status_code == 200
    assert post_api(limited, {"group": "orders-all", "role": "admin"}).status_code == 403  # unlimited
    assert post_api(limited, {"group": "sneaky", "role": "viewer", "places": [b.pk]}).status_code == 400  # unseen
    assert post_api(limited, {"group": "billing-team", "role": "viewer", "places": [a.pk]}).status_code == 403
    assert limited.delete("/api/claim-mappings/?group=everyone").status_code == 403
    assert limited.post("/roles/groups/", {"group": "x", "role": "admin"}).status_code == 403
    assert set(ClaimMapping.objects.values_list("group", flat=True)) == {"billing-team", "everyone", "orders-team"}
    assert AuditEvent.objects.filter(action="claim_mapping.refused").count() == 4
    assert [row["group"] for row in limited.get("/api/claim-mappings/").json()] == ["orders-team"]


def test_a_mapping_from_the_environment_is_shown_and_not_changed(places_a_and_b, people, signed_in_as, settings):
    settings.DLO_OIDC_ROLE_MAPPING = json.dumps([{"group": "ops", "role": "viewer",
                                                  "places": [{"broker": "mem", "name": "nowhere.dlq"}]}])
    admin = signed_in_as(people["admin"])
    page = admin.get("/roles/groups/").content.decode()
    assert "DLO_OIDC_ROLE_MAPPING" in page and "mem:nowhere.dlq (not found: allows nothing)" in page
    assert admin.get("/api/claim-mappings/").json() == [
        {"group": "ops", "role": "viewer", "note": "", "defined_in": "file",
         "limits": ["mem:nowhere.dlq (not found: allows nothing)"], "withhold": []}]
    assert post_api(admin, {"group": "x", "role": "admin"}).status_code == 409
    assert not ClaimMapping.objects.exists()


def test_where_a_role_came_from_is_shown_within_the_readers_limits(places_a_and_b, people, adam, signed_in_as):
    a, b = places_a_and_b.a, places_a_and_b.b
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[a])
    do_set_mapping(actor="tests", group="billing-team", role="operator", places=[b])
    for sub, group in (("pia", "orders-team"), ("bo", "billing-team")):
        access_from_claims({"sub": sub, "preferred_username": sub, "groups": [group]},
                           issuer="https://idp.example.test", via="sign-in")
    admin = {row["user"]: row for row in signed_in_as(people["admin"]).get("/api/roles/").json()}
    assert "groups orders-team" in admin["pia"]["role_from"] and "groups billing-team" in admin["bo"]["role_from"]
    assert "role_from" not in admin["vera"]  # set in the console
    limited = signed_in_as(adam)
    rows = {row["user"]: row for row in limited.get("/api/roles/").json()}
    assert "groups orders-team" in rows["pia"]["role_from"]
    assert rows["bo"]["role_from"] == "the identity provider"  # bo's groups would name B
    page = limited.get("/roles/").content.decode()
    assert "groups orders-team" in page and "billing" not in page
