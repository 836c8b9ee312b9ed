"""Every route under /api/ refuses a caller who has not signed in, whatever the method."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from console.models import DeadLetter, DeadPlace, Job, Origin
from console.services.channels import do_add_channel
from console.services.objectives import do_set_objective
from console.services.redaction import do_set_redaction_rule
from console.services.rules import do_create_rule
from console.services.saved_views import do_save_view
from tests.api.helpers import dead_message
from tests.web.factory import uploaded_mapping, uploaded_schema

pytestmark = pytest.mark.django_db

PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")


def api_routes() -> list[tuple[str, type]]:
    """(route with ``<param>`` placeholders, view class) for every URL pattern under api/."""
    def walk(patterns, prefix):
        for entry in patterns:
            route = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, route)
            elif isinstance(entry, URLPattern) and route.startswith("api/"):
                yield route, entry.callback.view_class

    return list(walk(get_resolver().url_patterns, ""))


def methods_of(view_class) -> list[str]:
    return [m for m in view_class.http_method_names if hasattr(view_class, m) or m == "head"]


@pytest.fixture
def existing_ids(capture, operator) -> dict[str, int]:
    (letter_id,) = capture([dead_message("hello")])
    letter = DeadLetter.objects.get(pk=letter_id)
    return {
        "broker_id": letter.broker_id,
        "place_id": letter.place_id,
        "letter_id": letter_id,
        "job_id": Job.objects.get().pk,
        "origin_id": Origin.objects.get(broker_id=letter.broker_id, name=letter.origin_queue).pk,
        "rule_id": do_create_rule(actor=operator, name="hold all", action={"kind": "hold"}).pk,
        "fingerprint": letter.fingerprint,
        "redaction_rule_id": do_set_redaction_rule(actor="tests", kind="regex", pattern=r"\d{16}").pk,
        "channel_id": do_add_channel(actor="tests", name="ops", kind="webhook", target="http://127.0.0.1:9/hook").pk,
        "body_schema_id": uploaded_schema().pk, "body_mapping_id": uploaded_mapping().pk,
        "view_id": do_save_view(actor=operator, name="every letter", filter={}, sharing="everyone").pk,
        "objective_id": do_set_objective(actor=operator, name="an hour", kind="oldest", seconds=3600,
                                         place=letter.place).pk,
    }


def test_every_route_and_method_refuses_an_anonymous_caller(existing_ids):
    routes = api_routes()
    # The walk must see the whole API, or this test would pass by looking at nothing.
    assert {"api/brokers/", "api/letters/<int:letter_id>/", "api/jobs/<int:job_id>/cancel/",
            "api/audit/", "api/schema/"} <= {route for route, _ in routes}
    anonymous = APIClient()
    tried = 0
    for route, view_class in routes:
        url = "/" + PARAMETER.sub(lambda m: str(existing_ids[m.group(1)]), route)
        for method in methods_of(view_class):
            response = anonymous.generic(method.upper(), url)
            assert response.status_code in (401, 403), f"{method.upper()} {url} -> {response.status_code}"
            tried += 1
    assert tried >= 25
    # Nothing was done on their behalf.
    assert Job.objects.count() == 1 and DeadPlace.objects.count() == 1


def test_a_wrong_token_is_refused_and_a_valid_token_works(operator):
    key = Token.objects.create(user=operator).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    refused = client.get("/api/brokers/")
    assert refused.status_code in (401, 403)
    assert refused.json() == {"detail": "Invalid token."}
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get("/api/brokers/")
    assert response.status_code == 200
    assert response.json() == []
