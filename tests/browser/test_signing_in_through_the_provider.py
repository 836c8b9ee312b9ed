"""Issue 33, in Chromium against the tests' real OpenID provider (tests.identity_provider): a
person signs in on the provider's page and lands with the role and limits their groups give,
seeing only their places; signing out ends both sessions; after their groups change at the
provider, the next sign-in gives the new role. An admin maps a group on the page and the next
sign-in follows it. With DLO_OIDC_ONLY the password form is gone and a POST of it is refused."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.access.roles import ADMIN, set_role
from console.models import AuditEvent
from console.services.claim_mappings import do_set_mapping
from tests.oidc_sign_in import configure
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def provider(oidc_settings, settings, live_server, memory_broker):
    configure(oidc_settings, settings, live_server.url)
    orders, billing = memory_place(memory_broker, origin="orders"), memory_place(memory_broker, origin="billing")
    store_letter(orders, b'{"order": 1}')
    store_letter(billing, b'{"ledger": 2}', origin="billing")
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[orders])
    do_set_mapping(actor="tests", group="dlo-admins", role="admin")
    oidc_settings.set_user("pia", "pia-pass-1", ["orders-team", "lunch-club"])
    return oidc_settings


def provider_sign_in(page, password: str = "pia-pass-1") -> None:
    page.goto("/")
    page.get_by_role("link", name="Sign in with the identity provider").click()
    expect(page.get_by_role("heading", name="Sign in to the identity provider")).to_be_visible()
    page.get_by_label("Username").fill("pia")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Inventory")).to_be_visible()


def test_sign_in_role_from_groups_sign_out_of_both_then_the_new_groups_role(page, provider, live_server,
                                                                            screenshot):
    # The console's own pages (the provider's have no favicon, which Chromium reports).
    ours: list[str] = []
    page.on("console", lambda msg: msg.type == "error" and msg.location["url"].startswith(live_server.url)
            and ours.append(msg.text))
    provider_sign_in(page)
    expect(page.get_by_role("link", name="orders.dlq")).to_be_visible()
    expect(page.get_by_role("link", name="billing.dlq")).to_have_count(0)  # limited to orders.dlq
    expect(page.get_by_role("button", name="Capture")).to_be_visible()  # an operator
    expect(page.get_by_role("link", name="Roles")).to_have_count(0)  # not an admin
    screenshot(page, "signed-in-through-the-provider")

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(re.escape(live_server.url) + r"/sign-in/(\?state=[^&]+)?$"))
    page.goto("/")
    expect(page).to_have_url(re.compile("/sign-in/"))  # out of the console
    page.get_by_role("link", name="Sign in with the identity provider").click()
    # Out of the provider too: it asks for the password again instead of sending pia straight back.
    expect(page.get_by_role("heading", name="Sign in to the identity provider")).to_be_visible()

    provider.set_user("pia", "pia-pass-1", ["dlo-admins"])  # moved to another group at the provider
    page.get_by_label("Username").fill("pia")
    page.get_by_label("Password").fill("pia-pass-1")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Inventory")).to_be_visible()
    expect(page.get_by_role("link", name="billing.dlq")).to_be_visible()  # unlimited now
    page.get_by_text("Settings", exact=True).click()  # the settings pages are in its menu
    page.get_by_role("link", name="Roles").click()
    row = page.get_by_role("row").filter(has_text="pia")
    expect(row).to_contain_text("admin")
    expect(row).to_contain_text("groups dlo-admins")
    expect(row).to_contain_text("(dlo-admins)")
    actions = list(AuditEvent.objects.filter(target="pia").order_by("id").values_list("action", flat=True))
    assert actions == ["access.from_claims", "sign-in.succeeded", "sign-out", "access.from_claims",
                       "sign-in.succeeded"], actions
    assert ours == [] and not [error for error in page.watch.errors if "Failed to load resource" not in error]


def test_passwords_off_the_form_is_gone_and_a_post_is_refused(page, provider, settings, operator):
    settings.DLO_OIDC_ONLY = True
    page.goto("/sign-in/")
    expect(page.get_by_role("link", name="Sign in with the identity provider")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_count(0)
    token = next(cookie["value"] for cookie in page.context.cookies() if cookie["name"] == "csrftoken")
    refused = page.request.post("/sign-in/", form={"username": "olga", "password": "triage-pass-123",
                                                   "csrfmiddlewaretoken": token},
                                headers={"X-CSRFToken": token, "Referer": page.url})
    assert refused.status == 403 and "Passwords are off" in refused.text()
    page.goto("/")
    expect(page).to_have_url(re.compile("/sign-in/"))  # not signed in
    assert AuditEvent.objects.filter(action="sign-in.failed", details__why="passwords are off (DLO_OIDC_ONLY)").exists()
    provider_sign_in(page)  # the provider still signs people in


def test_an_admin_maps_a_group_in_the_browser_and_the_next_sign_in_follows_it(page, provider, live_server,
                                                                              django_user_model):
    ada = django_user_model.objects.create_user("ada", password="ada-pass-123")
    set_role(ada, ADMIN)
    provider.set_user("pia", "pia-pass-1", ["billing-team"])
    page.goto("/sign-in/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("ada-pass-123")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Settings", exact=True).click()  # the settings pages are in its menu
    page.get_by_role("link", name="Roles").click()
    page.get_by_role("link", name="Groups and roles").click()
    form = page.get_by_role("form", name="Map a group")
    form.get_by_label("Group").fill("billing-team")
    form.get_by_label("Role").select_option("viewer")
    form.get_by_label("Places").select_option(label="mem:billing.dlq")
    form.get_by_label("Reason").fill("billing reads its letters")
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_text("The group billing-team now gives viewer.")).to_be_visible()
    row = page.get_by_role("row").filter(has_text="billing-team")
    expect(row).to_contain_text("viewer")
    expect(row).to_contain_text("mem:billing.dlq")
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile("/sign-in/"))  # a password sign-in: no provider to leave

    provider_sign_in(page)
    expect(page.get_by_role("link", name="billing.dlq")).to_be_visible()
    expect(page.get_by_role("link", name="orders.dlq")).to_have_count(0)
    expect(page.get_by_role("button", name="Capture")).to_have_count(0)  # a viewer
    assert AuditEvent.objects.filter(action="claim_mapping.set", actor_name="ada",
                                     reason="billing reads its letters").exists()
