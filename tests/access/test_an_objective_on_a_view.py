"""Issue 51: an objective set on a saved view is judged over the view's letters in every place
(the oldest held letter that its filter takes), told and audited when its state changes, and
shown on the view's page and in the metrics with the view's name. Judged over every place, it
is set and seen only by people without limits who may open the view: a user limited to one
place neither sees it nor sets one, and a view not shared with a reader hides its objectives
too."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from console.access.roles import set_role
from console.models import AuditEvent, DeadLetter, Objective, RoleScope
from console.services.objectives import evaluate_objectives
from console.services.saved_views import do_save_view
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def billing(memory_broker, people):
    """A view of the letters from billing, in two places, shared with everyone; one letter of
    another origin that the view does not take."""
    first, second = memory_place(memory_broker), memory_place(memory_broker, origin="payments")
    # The second place's letter first: the oldest held is the first by id (ids follow captures).
    letters = [store_letter(second, b"{}", origin="billing"), store_letter(first, b"{}", origin="billing")]
    store_letter(first, b"{}", origin="shipping")
    view = do_save_view(actor=people["admin"], name="billing", filter={"origin": '"billing"'}, sharing="everyone")
    return view, letters, first


def test_an_objective_on_a_view_follows_its_oldest_letter_in_every_place(billing, people, signed_in_as, client,
                                                                       settings):
    view, letters, _ = billing
    operator = signed_in_as(people["operator"])
    made = operator.post("/api/objectives/", {"name": "billing within an hour", "view": view.pk, "kind": "oldest",
                                              "seconds": 3600}, content_type="application/json")
    assert made.status_code == 201, made.content
    assert made.json()["view"] == view.pk and made.json()["state"] == "met"
    objective = Objective.objects.get(pk=made.json()["id"])

    # The second place's letter is the view's oldest: 50 minutes, then two hours.
    DeadLetter.objects.filter(pk=letters[0].pk).update(captured_at=timezone.now() - timedelta(minutes=50))
    assert [event for _, event in evaluate_objectives()] == ["objective.at_risk"]
    DeadLetter.objects.filter(pk=letters[0].pk).update(captured_at=timezone.now() - timedelta(hours=2))
    assert [event for _, event in evaluate_objectives()] == ["objective.breached"]
    assert evaluate_objectives() == [], "told once"
    objective.refresh_from_db()
    assert objective.state == "breached" and objective.oldest_age_seconds > 7000
    told = AuditEvent.objects.get(action="objective.breached")
    assert told.details["target"] == "view billing" and told.actor_name == "system:objectives"

    page = operator.get(f"/views/{view.pk}/").content.decode()
    assert "billing within an hour" in page and "breached" in page
    settings.DLO_METRICS_TOKEN = "scrape-me"
    metrics = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").content.decode()
    (age,) = re.findall(r'^dlo_objective_oldest_age_seconds\{[^}]*view="billing"[^}]*\} (\S+)$', metrics, re.M)
    assert float(age) > 7000

    DeadLetter.objects.filter(pk=letters[0].pk).update(state="replayed")  # the other letter is young
    assert [event for _, event in evaluate_objectives()] == ["objective.recovered"]


def test_a_user_limited_to_one_place_neither_sees_nor_sets_an_objective_on_a_view(billing, people, signed_in_as,
                                                                                 django_user_model):
    view, _, first = billing
    operator = signed_in_as(people["operator"])
    made = operator.post(f"/views/{view.pk}/objectives/", {"name": "billing in a day", "kind": "oldest",
                                                           "minutes": "1440"})
    assert made.status_code == 302
    assert Objective.objects.filter(view=view, name="billing in a day").exists()

    limited = django_user_model.objects.create_user("lima", password="lima-pass-123")
    set_role(limited, "operator")
    RoleScope.objects.create(user=limited, place=first)
    client = signed_in_as(limited)
    assert client.get("/api/objectives/").json() == []
    refused = client.post("/api/objectives/", {"name": "mine", "view": view.pk, "kind": "oldest", "seconds": 60},
                          content_type="application/json")
    assert refused.status_code == 403 and "without limits" in refused.json()["detail"]
    page = client.get(f"/views/{view.pk}/").content.decode()
    assert "billing in a day" not in page and "Set an objective" not in page

    # A view not shared with a reader hides its objectives from them.
    private = do_save_view(actor=people["admin"], name="admin's own", filter={"state": "held"})
    admin = signed_in_as(people["admin"])
    assert admin.post("/api/objectives/", {"name": "own", "view": private.pk, "kind": "oldest", "seconds": 60},
                      content_type="application/json").status_code == 201
    names = [o["name"] for o in signed_in_as(people["viewer"]).get("/api/objectives/").json()]
    assert names == ["billing in a day"]
    assert signed_in_as(people["operator"]).post(
        "/api/objectives/", {"name": "theirs", "view": private.pk, "kind": "oldest", "seconds": 60},
        content_type="application/json").status_code == 400, "a view one may not open is not said to exist"
