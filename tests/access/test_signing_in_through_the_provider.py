"""Issue 33: signing in through the real OpenID provider (tests.identity_provider) with the test
client: the code exchanged, the ID token validated, the role and limits from the groups claim,
each outcome audited without a token; a forged or replayed answer refused."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

import pytest

from console.access.roles import role_of
from console.access.scope import scope_of
from console.models import AuditEvent
from console.services.claim_mappings import do_set_mapping
from tests.oidc_sign_in import TEST_SERVER, configure, sign_in, through_provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(oidc_settings, settings):
    configure(oidc_settings, settings, TEST_SERVER)
    return oidc_settings


def test_a_person_signs_in_with_the_role_and_limits_of_their_groups(provider, client, places_a_and_b,
                                                                     django_user_model):
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[places_a_and_b.a])
    provider.set_user("pia", "pia-pass", ["orders-team", "lunch-club"], email="pia@example.test")
    answer = sign_in(client, "pia", "pia-pass")
    assert answer.status_code == 302 and answer["Location"] == "/"
    pia = django_user_model.objects.get(external_identity__subject="pia")
    assert role_of(pia) == "operator" and scope_of(pia).places == {places_a_and_b.a.pk}
    page = client.get("/").content.decode()
    assert "orders.dlq" in page and "billing.dlq" not in page
    event = AuditEvent.objects.filter(action="sign-in.succeeded", target=pia.username).get()
    assert event.details["provider"] == provider.issuer and event.details["subject"] == "pia"
    assert event.details["groups"] == ["orders-team"] and event.details["role"] == "operator"
    everything = " ".join(str(row) for row in AuditEvent.objects.values_list("details", flat=True))
    id_token = client.session.get("dlo_oidc_id_token")
    assert id_token and id_token not in everything and id_token.split(".")[1] not in everything


def test_someone_in_no_mapped_group_is_refused_and_audited(provider, client, places_a_and_b):
    provider.set_user("nils", "nils-pass", ["lunch-club"])
    answer = sign_in(client, "nils", "nils-pass")
    assert answer.status_code == 403 and "_auth_user_id" not in client.session
    assert "no group of yours" in answer.content.decode()
    event = AuditEvent.objects.filter(action="sign-in.refused").get()
    assert event.details["subject"] == "nils" and event.details["groups"] == ["lunch-club"]


def test_an_answer_replayed_or_with_a_forged_state_is_refused(provider, client, places_a_and_b):
    do_set_mapping(actor="tests", group="orders-team", role="viewer")
    provider.set_user("pia", "pia-pass", ["orders-team"])
    start = client.get("/sign-in/provider/")
    back = through_provider(start["Location"], "pia", "pia-pass")[len(TEST_SERVER):]
    forged = back.replace("state=", "state=x")
    assert client.get(forged).status_code == 400 and "_auth_user_id" not in client.session
    assert client.get(back).status_code == 302 and "_auth_user_id" in client.session
    client.logout()
    assert client.get(back).status_code == 400  # the state was used up
    # The forged answer came while a sign-in was begun: audited. The replay, to a browser that
    # began none, is only logged (anyone may send those: the audit is not theirs to fill).
    assert AuditEvent.objects.filter(action="sign-in.refused").count() == 1


def test_a_provider_whose_discovery_names_another_issuer_is_refused(provider, client, settings):
    settings.DLO_OIDC_ISSUER = provider.issuer.replace("127.0.0.1", "localhost")
    answer = client.get("/sign-in/provider/")
    assert answer.status_code == 503 and "is not the configured issuer&#x27;s" in answer.content.decode()


def test_passwords_off_leaves_only_the_break_glass_accounts_a_password(provider, client, people, settings):
    assert client.get("/sign-in/break-glass/").status_code == 404  # passwords on: no such page
    settings.DLO_OIDC_ONLY, settings.DLO_BREAK_GLASS_USERS = True, ["ada"]
    page = client.get("/sign-in/").content.decode()
    assert "Sign in with the identity provider" in page and 'name="password"' not in page
    refused = client.post("/sign-in/", {"username": "ada", "password": "ada-pass-123"})
    assert refused.status_code == 403 and "_auth_user_id" not in client.session
    other = client.post("/sign-in/break-glass/", {"username": "vera", "password": "vera-pass-123"})
    assert other.status_code == 200 and "_auth_user_id" not in client.session
    assert "signs in through the identity provider" in other.content.decode()
    glass = client.post("/sign-in/break-glass/", {"username": "ada", "password": "ada-pass-123"})
    assert glass.status_code == 302 and client.session["_auth_user_id"] == str(people["admin"].pk)
    assert AuditEvent.objects.filter(action="sign-in.break-glass", target="ada").count() == 1
    assert AuditEvent.objects.filter(action="sign-in.failed", outcome="refused").count() == 2


def test_no_token_or_code_reaches_the_log(provider, client, places_a_and_b, caplog):
    caplog.set_level(logging.DEBUG)
    do_set_mapping(actor="tests", group="orders-team", role="viewer")
    provider.set_user("pia", "pia-pass", ["orders-team"])
    start = client.get("/sign-in/provider/")
    back = through_provider(start["Location"], "pia", "pia-pass")
    code = parse_qs(urlsplit(back).query)["code"][0]
    caplog.clear()  # what the console logs from here on, not what the test's "browser" did
    assert client.get(back[len(TEST_SERVER):]).status_code == 302
    logged = caplog.text + " ".join(str(record.args) for record in caplog.records)
    assert "127.0.0.1" in logged  # the console's exchange with the provider was logged...
    assert code not in logged and "eyJ" not in logged  # ...without the code or a JWT (ID or access token)
    assert "code_verifier" not in logged and client.session["dlo_oidc_id_token"].startswith("eyJ")
