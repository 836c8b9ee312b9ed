"""Issue 45: a console session begun through the provider lasts DLO_OIDC_SESSION_SECONDS, then
the provider is asked again (console.security.sessions): silently while the person's session at
the provider lives, the mapping applied again; a group removed at the provider takes the role
away at that renewal, and a provider session that has ended sends the person to sign in."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import httpx
import pytest

from console.access.roles import role_of
from console.models import AuditEvent
from console.security.sessions import UNTIL
from console.services.claim_mappings import do_set_mapping
from tests.oidc_sign_in import TEST_SERVER, configure, sign_in, through_provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(oidc_settings, settings):
    configure(oidc_settings, settings, TEST_SERVER, DLO_OIDC_SESSION_SECONDS=600)
    do_set_mapping(actor="tests", group="orders-team", role="operator")
    oidc_settings.set_user("pia", "pia-pass", ["orders-team"])
    return oidc_settings


def _time_is_up(client) -> None:
    session = client.session
    session[UNTIL] = 0
    session.save()


def _renew(client, idp: httpx.Client, page: str = "/letters/"):
    """Open a page past the session's time: the console sends the browser to the provider, which
    (its session alive) answers at once; the console's answer to that."""
    sent = client.get(page)
    assert sent.status_code == 302 and sent["Location"].startswith("/sign-in/provider/?renew=1"), sent
    start = client.get(sent["Location"])
    assert start.status_code == 302 and "prompt=none" in start["Location"]
    back = through_provider(start["Location"], "pia", "never-typed", idp)
    return client.get(back[len(TEST_SERVER):])


def test_a_session_past_its_time_renews_silently_and_comes_back_to_its_page(provider, client, django_user_model):
    with httpx.Client(follow_redirects=False, timeout=10) as idp:
        assert sign_in(client, "pia", "pia-pass", idp).status_code == 302
        assert 590 < client.session[UNTIL] - time.time() <= 600
        _time_is_up(client)
        answer = _renew(client, idp)
    assert answer.status_code == 302 and answer["Location"] == "/letters/"
    assert client.get("/letters/").status_code == 200
    assert AuditEvent.objects.filter(action="sign-in.renewed", target="pia").count() == 1


def test_a_group_removed_at_the_provider_takes_the_role_away_at_the_renewal(provider, client, django_user_model):
    with httpx.Client(follow_redirects=False, timeout=10) as idp:
        assert sign_in(client, "pia", "pia-pass", idp).status_code == 302
        pia = django_user_model.objects.get(external_identity__subject="pia")
        assert role_of(pia) == "operator"
        provider.set_user("pia", "pia-pass", ["lunch-club"])  # no longer in orders-team
        _time_is_up(client)
        answer = _renew(client, idp)
    assert answer.status_code == 403
    assert role_of(django_user_model.objects.get(pk=pia.pk)) == ""
    assert client.get("/").status_code == 302  # signed out


def test_a_provider_session_that_ended_sends_the_person_to_sign_in(provider, client):
    assert sign_in(client, "pia", "pia-pass").status_code == 302  # its provider cookies are gone
    _time_is_up(client)
    with httpx.Client(follow_redirects=False, timeout=10) as idp:
        sent = client.get("/letters/")
        start = client.get(sent["Location"])
        back = through_provider(start["Location"], "pia", "never-typed", idp)
    assert "error=login_required" in back
    answer = client.get(back[len(TEST_SERVER):])
    assert answer.status_code == 302 and urlsplit(answer["Location"]).path == "/sign-in/"
    assert client.get("/").status_code == 302
    assert AuditEvent.objects.filter(action="sign-out", target="pia").exists()


def test_past_its_time_a_form_or_the_api_is_refused_until_renewed(provider, client):
    assert sign_in(client, "pia", "pia-pass").status_code == 302
    _time_is_up(client)
    assert client.get("/api/letters/").status_code == 401
    htmx = client.get("/letters/", headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/letters/?a=1"})
    assert htmx["HX-Redirect"].startswith("/sign-in/provider/?renew=1")
