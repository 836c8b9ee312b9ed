"""No provider token, nor any of its three parts, is written to a log line or an audit row: not
when it is accepted (its claims give the script its role, audited), not when it is refused
(audited with the reason), not when the script then acts (audited), and not even when some
code logs an Authorization header carelessly (console.access.logsafe masks JWTs)."""

from __future__ import annotations

import json
import logging
import time

import pytest

from console.models import AuditEvent, ExternalIdentity
from console.services.claim_mappings import do_set_mapping

pytestmark = pytest.mark.django_db


def pieces(token: str) -> list[str]:
    """The token and each of its parts long enough to identify it."""
    return [token, *[part for part in token.split(".") if len(part) >= 16]]


def test_tokens_leave_no_trace_in_logs_or_audit(oidc_settings, places, bearer, caplog):
    provider = oidc_settings
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[places.orders])
    provider.set_script_groups(["orders-team"])
    caplog.set_level(logging.DEBUG)

    good = provider.client_credentials_token()
    now = int(time.time())
    expired = provider.sign({"iss": provider.issuer, "sub": provider.script.client_id, "aud": provider.api_audience,
                             "iat": now - 7200, "exp": now - 3600, "groups": ["orders-team"]})
    elsewhere = provider.client_credentials_token(resource=provider.other_audience)
    header, payload, _ = good.split(".")
    tampered = f"{header}.{payload}.{'A' * 342}"

    assert bearer(good).get("/api/letters/").status_code == 200
    asked = bearer(good).post(f"/api/places/{places.orders.pk}/capture/", {"reason": "script triage"}, format="json")
    assert asked.status_code == 202, asked.content
    for bad in (expired, elsewhere, tampered):
        assert bearer(bad).get("/api/letters/").status_code == 401
    logging.getLogger("console.api").warning("careless: Authorization: %s", f"Bearer {good}")

    # What the test looks through is not empty: the accepted token's claims gave a role, the
    # script asked for a capture, three refusals, and the log lines of all that.
    actions = list(AuditEvent.objects.order_by("id").values_list("action", flat=True))
    assert {"access.from_claims", "job.requested", "api.token.refused"} <= set(actions)
    assert actions.count("api.token.refused") == 3
    script = ExternalIdentity.objects.get(subject=provider.script.client_id).user
    assert AuditEvent.objects.filter(action="job.requested", actor_name=script.username,
                                     reason="script triage").exists()
    assert any("careless: Authorization: Bearer ***" in record.getMessage() for record in caplog.records)

    audited = json.dumps(list(AuditEvent.objects.values()), default=str)
    logged = "\n".join([caplog.text, *(repr(vars(record)) for record in caplog.records)])
    for token in (good, expired, elsewhere, tampered):
        for piece in pieces(token):
            assert piece not in audited, "a token reached the audit"
            assert piece not in logged, "a token reached a log line"
