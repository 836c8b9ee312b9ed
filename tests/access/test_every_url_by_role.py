"""Every URL of the console, asked by anonymous, viewer, operator and admin, answers as the
policy table (console.access.policy) allows; a URL nobody classified fails this test. Asked by
each role limited to another place, a URL naming an object outside answers 404 and the others
answer as allowed, naming nothing outside."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from console.access import policy
from console.access.roles import ROLES as PERMISSIONS_OF
from console.brokers.memory.adapter import MemoryBroker, Message
from console.jobs.door.requests import request_job
from console.models import Job, Origin, RedactionRule, RoleScope
from console.services.brokers import do_add_broker
from console.services.channels import do_add_channel
from console.services.objectives import do_set_objective
from console.services.redaction import do_set_redaction_rule
from console.services.saved_views import do_save_view
from tests.access.conftest import ROLES
from tests.web.factory import memory_place, store_letter, uploaded_mapping, uploaded_schema

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

_CONVERTER = re.compile(r"<(?:(?P<type>\w+):)?(?P<name>\w+)>")


def every_url(resolver=None, prefix: str = "") -> list[tuple[str, str]]:
    """(url name, route with converters) of every pattern, walking included URL confs."""
    resolver = resolver or get_resolver()
    found = []
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            found.extend(every_url(entry, route))
        elif isinstance(entry, URLPattern):
            found.append((entry.name, route))
    return found


def filled(route: str, ids: dict[str, int]) -> str:
    """The route with each ``<int:x>`` replaced by the id of a real object."""

    def value(match) -> str:
        name = match["name"]
        assert name in ids, f"{route}: no object to fill <{name}> with; add one to the test's ids"
        return str(ids[name])

    return "/" + _CONVERTER.sub(value, route)


@pytest.fixture
def ids(memory_broker, people, operator) -> dict[str, int]:
    """One real object for each keyword a URL takes."""
    fake, broker = memory_broker
    place = memory_place(memory_broker)
    fake.queue("orders.dlq").append(Message(b"still on the broker"))
    letter = store_letter(place, b'{"order": 1}')
    job = request_job("mark_failed", actor=operator, reason="classified", ids=[letter.pk])
    rule = do_set_redaction_rule(actor="tests", kind="header", pattern="authorization")
    origin = Origin.objects.get(broker=broker, name=letter.origin_queue)  # made by the letter's capture
    return {"broker_id": broker.pk, "place_id": place.pk, "letter_id": letter.pk, "job_id": job.pk,
            "rule_id": rule.pk, "redaction_rule_id": rule.pk, "user_id": operator.pk, "origin_id": origin.pk,
            "fingerprint": letter.fingerprint, "channel_id": do_add_channel(actor="tests", name="ops", kind="webhook", target="http://127.0.0.1:9/hook").pk,
            "body_schema_id": uploaded_schema().pk, "body_mapping_id": uploaded_mapping().pk,
            "view_id": do_save_view(actor=people["admin"], name="every letter", filter={"state": "held"},
                                    sharing="everyone").pk,
            "objective_id": do_set_objective(actor=people["admin"], name="an hour", kind="oldest", seconds=3600,
                                             place=place).pk}


#: URL keywords naming a broker, place, letter, job or origin: the objects a scope limits.
SCOPED_KEYWORDS = ("broker_id", "place_id", "letter_id", "job_id", "origin_id", "fingerprint", "objective_id")
#: What the objects of ``ids`` show: the place's name, its letter's body.
INSIDE_IDS = ("orders.dlq", '{"order": 1}', "&quot;order&quot;: 1")


@pytest.fixture
def limited_elsewhere(people):
    """vera, otto and ada, each limited to a place on another broker: every object of ``ids``
    lies outside their scope."""
    MemoryBroker.instances.pop("other", None)
    other = do_add_broker(actor="tests", name="other", kind="memory", url="memory://other")
    place = memory_place((MemoryBroker.named("other"), other), origin="elsewhere")
    RoleScope.objects.bulk_create([RoleScope(user=user, place=place) for user in people.values()])
    yield place
    MemoryBroker.instances.pop("other", None)


def body_text(response) -> str:
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return content.decode(errors="replace")


def allowed(role: str, needed: list[str]) -> bool:
    return all(codename in PERMISSIONS_OF[role] for codename in needed if codename != policy.SIGNED_IN)


def test_every_url_name_is_classified_and_every_classification_is_a_url():
    names = {name for name, _ in every_url()}
    assert None not in names, "every URL needs a name the policy can classify"
    assert names - set(policy.URL_PERMISSIONS) == set(), "classify these in console.access.policy"
    assert set(policy.URL_PERMISSIONS) - names == set(), "these classified names are no URL any more"


@pytest.mark.urls("tests.access.urls_with_an_unclassified_page")
def test_a_page_nobody_classified_is_refused_even_to_an_admin(people, signed_in_as):
    response = signed_in_as(people["admin"]).get("/forgotten/")
    assert response.status_code == 403 and b"anyone?" not in response.content


@pytest.mark.parametrize("method", ["get", "post"])
def test_every_url_answers_each_role_as_the_policy_allows(method, ids, people, signed_in_as):
    checked = 0
    for name, route in every_url():
        url = filled(route, ids)
        needed = policy.required(name, method.upper())
        is_api = url.startswith("/api/")
        # Signed out: the sign-in page for pages, 401/403 for the API; public pages answer.
        response = getattr(signed_in_as(None), method)(url)
        if needed == [policy.PUBLIC]:
            assert response.status_code < 500 and response.status_code not in (401, 403), (url, response)
        elif is_api:
            assert response.status_code in (401, 403), (method, url, response.status_code)
        else:
            assert response.status_code == 302 and response["Location"].startswith("/sign-in/"), (method, url)
        for role in ROLES:
            response = getattr(signed_in_as(people[role]), method)(url)
            status = response.status_code
            if needed == [policy.PUBLIC] or allowed(role, needed):
                assert status < 500 and status not in (401, 403), (role, method, url, status)
                if method == "get" and not is_api and needed != [policy.PUBLIC]:
                    assert status in (200, 405), (role, url, status)  # 405: a POST-only action
            else:
                assert status == 403, (role, method, url, status)
                if is_api:
                    assert response["Content-Type"] == "application/json", (role, method, url)
                else:
                    assert b"Your role does not allow this." in response.content, (role, method, url)
            checked += 1
    assert checked >= 3 * len(policy.URL_PERMISSIONS)


@pytest.mark.parametrize("method", ["get", "post"])
def test_every_url_answers_a_user_limited_to_another_place_as_if_the_objects_did_not_exist(
        method, ids, people, limited_elsewhere, signed_in_as):
    checked = 0
    for name, route in every_url():
        url = filled(route, ids)
        needed = policy.required(name, method.upper())
        names_scoped_object = any(f"<int:{keyword}>" in route for keyword in SCOPED_KEYWORDS)
        for role in ROLES:
            response = getattr(signed_in_as(people[role]), method)(url)
            status = response.status_code
            if needed == [policy.PUBLIC]:
                assert status < 500 and status not in (401, 403), (role, method, url, status)
            elif not allowed(role, needed):
                assert status == 403, (role, method, url, status)
            elif names_scoped_object:
                assert status == 404, (role, method, url, status)
            else:
                assert status < 500 and status not in (401, 403), (role, method, url, status)
                if method == "get":
                    text = body_text(response)
                    assert not [shown for shown in INSIDE_IDS if shown in text], (role, url)
            checked += 1
    assert checked >= 3 * len(policy.URL_PERMISSIONS)


def test_a_viewer_reads_everything_readable_and_changes_nothing(ids, people, signed_in_as):
    viewer = signed_in_as(people["viewer"])
    assert viewer.get(f"/letters/{ids['letter_id']}/").status_code == 200
    assert viewer.post(f"/places/{ids['place_id']}/capture/", {"reason": "peek"}).status_code == 403
    assert viewer.post(f"/jobs/{ids['job_id']}/cancel/").status_code == 403
    assert viewer.post("/api/jobs/", {"action": "replay", "letters": [ids["letter_id"]], "reason": "x"},
                       content_type="application/json").status_code == 403
    assert Job.objects.count() == 1 and RedactionRule.objects.count() == 1


def test_an_operator_may_not_purge_by_page_or_api_but_an_admin_may(ids, people, signed_in_as):
    letter, place = ids["letter_id"], ids["place_id"]
    purge = {"action": "purge", "reason": "cleanup", "ids": [letter]}
    operator = signed_in_as(people["operator"])
    assert operator.post(f"/places/{place}/preview/", purge).status_code == 403
    refused = operator.post("/api/jobs/", {"action": "purge", "letters": [letter], "reason": "cleanup"},
                            content_type="application/json")
    assert refused.status_code == 403 and refused.json()["detail"] == "Your role does not allow this."
    page = operator.get(f"/places/{place}/").content.decode()
    assert '<option value="replay">' in page and '<option value="purge">' not in page
    admin = signed_in_as(people["admin"])
    assert '<option value="purge">' in admin.get(f"/places/{place}/").content.decode()
    assert admin.post(f"/places/{place}/preview/", purge).status_code == 200
    assert not Job.objects.filter(kind="purge").exists()


def test_buttons_a_role_may_not_use_are_not_shown(ids, people, signed_in_as):
    viewer_page = signed_in_as(people["viewer"]).get(f"/brokers/{ids['broker_id']}/").content.decode()
    assert "Discover dead places" not in viewer_page and "Change connection" not in viewer_page
    assert "Add broker" not in viewer_page
    inventory = signed_in_as(people["viewer"]).get("/").content.decode()
    assert ">Capture</button>" not in inventory
    operator_page = signed_in_as(people["operator"]).get(f"/brokers/{ids['broker_id']}/").content.decode()
    assert "Discover dead places" in operator_page and "Change connection" not in operator_page
    admin_page = signed_in_as(people["admin"]).get(f"/brokers/{ids['broker_id']}/").content.decode()
    assert "Change connection" in admin_page and ">Redaction</a>" in admin_page


def test_htmx_requests_get_a_fragment_or_a_redirect_to_sign_in(ids, people, signed_in_as):
    refused = signed_in_as(people["viewer"]).post(f"/jobs/{ids['job_id']}/pause/", HTTP_HX_REQUEST="true")
    assert refused.status_code == 403 and refused.content.startswith(b'<p class="error"')
    signed_out = signed_in_as(None).get(f"/jobs/{ids['job_id']}/", HTTP_HX_REQUEST="true")
    assert signed_out.status_code == 401 and signed_out["HX-Redirect"].startswith("/sign-in/")


def test_a_user_without_a_role_is_refused_everywhere_but_their_tokens(django_user_model, signed_in_as):
    nobody = signed_in_as(django_user_model.objects.create_user("nemo", password="nemo-pass-123"))
    assert nobody.get("/").status_code == 403
    assert nobody.get("/api/letters/").status_code == 403
    assert nobody.get("/tokens/").status_code == 200
