"""Which permission each URL needs, by URL name and HTTP method.

Pages (console.access.middleware) and the API (console.access.api) read this one table. A
URL name missing from it is refused for everyone, and tests/access/test_every_url_by_role.py
fails, so a new endpoint cannot go out unprotected by accident.
"""

from __future__ import annotations

from console.access.roles import (
    ACT,
    EXPORT,
    MANAGE_BROKERS,
    MANAGE_REDACTION,
    MANAGE_USERS,
    PURGE,
    SEE_UNREDACTED,
    VIEW,
)

#: Open to anyone, signed in or not.
PUBLIC = "public"
#: Any signed-in user, whatever their role (e.g. their own API tokens).
SIGNED_IN = "signed_in"

#: url name -> permission codename for every method, or {method: codename} ("*" for the rest).
URL_PERMISSIONS: dict[str, str | dict[str, str]] = {
    # Signing in and out.
    "login": PUBLIC,
    "logout": PUBLIC,
    # Through the identity provider (console.security.oidc), and the break-glass password form
    # (there only while DLO_OIDC_ONLY turns passwords off).
    "oidc-start": PUBLIC,
    "oidc-callback": PUBLIC,
    # The provider's sign-out (console.security.logout): its signed logout token is the proof.
    "oidc-backchannel-logout": PUBLIC,
    "oidc-frontchannel-logout": PUBLIC,
    "login-break-glass": PUBLIC,
    # Prometheus's scrape: its own bearer token (DLO_METRICS_TOKEN), checked by the view.
    "metrics": PUBLIC,
    # A liveness probe: the database reached, and the identity provider's state as last seen.
    "healthz": PUBLIC,
    # Pages.
    "inventory": VIEW,
    "groups": VIEW,
    "groups-history": VIEW,
    "analytics": VIEW,
    "group": VIEW,
    # Deciding about a group (status, owner, tags) and adding a note: an operator's.
    "group-change": ACT,
    "place": VIEW,
    "objective-new": ACT,
    "objective-delete": ACT,
    "view-objective-new": ACT,
    "place-groups": VIEW,
    "letters": VIEW,
    "saved-views-nav": VIEW,
    "saved-view-new": VIEW,
    "saved-view": VIEW,
    "saved-view-subscription": VIEW,
    "saved-view-count": VIEW,
    "letter": VIEW,
    "jobs": VIEW,
    "job": VIEW,
    "audit": VIEW,
    # Exports are redacted for everyone (console.access.redaction_policy).
    "audit-export-csv": VIEW,
    "audit-export-json": VIEW,
    "broker": VIEW,
    # Raw message content, read live or downloaded: not for viewers, whose view is masked.
    "place-peek": SEE_UNREDACTED,
    "letter-body": SEE_UNREDACTED,
    "broker-check": ACT,
    "broker-discover": ACT,
    "place-capture": ACT,
    # Keeping a place in custody, or a broker's new places: an operator's decision, like a capture.
    "place-keep": ACT,
    "broker-keep-new": ACT,
    # A whole place moved by the broker (RabbitMQ's shovel): a move, so operators may ask for it.
    "place-shovel": ACT,
    # Purge is refused to non-admins by the one door of every job (console.jobs.door.requests).
    "action-preview": ACT,
    "letters-preview": ACT,
    "action-confirm": ACT,
    "action-arrived": ACT,
    "letter-edit": ACT,
    "letter-release": ACT,
    "letter-mark": ACT,
    # Handling rules: anyone sees them; operators make drafts, dry-run, enable (with the rights
    # the rule's action needs, checked by console.services.rules) and delete them.
    "rules": {"GET": VIEW, "*": ACT},
    "rule-dry-run": ACT,
    "rule-switch": ACT,
    "rule-delete": ACT,
    "origins": VIEW,
    "origin-close-breaker": ACT,
    "job-cancel": ACT,
    "job-pause": ACT,
    "job-resume": ACT,
    # The second person of a two-person job (console.jobs.door.approvals refuses the requester).
    "approvals": VIEW,
    "job-approve": ACT,
    "job-refuse": ACT,
    # Each user's own API tokens, whatever their role (a token carries no more than its user).
    "tokens": SIGNED_IN,
    "token-create": SIGNED_IN,
    "token-revoke": SIGNED_IN,
    "broker-new": MANAGE_BROKERS,
    "broker-test": MANAGE_BROKERS,
    "broker-edit": MANAGE_BROKERS,
    "broker-edit-test": MANAGE_BROKERS,
    "redaction": MANAGE_REDACTION,
    "redaction-delete": MANAGE_REDACTION,
    "body-schemas": MANAGE_BROKERS,
    # Another console's export taken in (an admin of every place: the service says so).
    "imports": MANAGE_BROKERS,
    "body-schema-delete": MANAGE_BROKERS,
    "body-mapping-delete": MANAGE_BROKERS,
    "notifications": MANAGE_USERS,
    "channel-test": MANAGE_USERS,
    "channel-change": MANAGE_USERS,
    "roles": MANAGE_USERS,
    "role-grant": MANAGE_USERS,
    # Which role and limits each group of the identity provider gives (console.services.claim_mappings
    # keeps an admin limited to some places within them).
    "claim-mappings": MANAGE_USERS,
    # The REST API.
    # Handling rules: operators make and change them (enabling one needs its action's rights,
    # checked by console.services.rules); a dry run counts letters by content, so not a viewer's.
    # Failure groups: anyone reads them; deciding about one (status, owner, tags, notes) is an operator's.
    "api-groups": VIEW,
    "api-groups-history": VIEW,
    "api-analytics": VIEW,
    "api-group": {"GET": VIEW, "*": ACT},
    "api-group-notes": ACT,
    "api-rules": {"GET": VIEW, "*": ACT},
    "api-rule": {"GET": VIEW, "*": ACT},
    "api-rule-dry-run": ACT,
    # Notification channels may point anywhere and subscriptions tell people about places: an
    # admin's (console.services.channels checks it too); the delivery log with them.
    # The admin pages' API: the same permissions as the pages (tokens: each user's own).
    "api-redaction-rules": MANAGE_REDACTION,
    # Schemas bodies are read with (Protobuf descriptor sets): listed for anyone, an admin's to change.
    "api-body-schemas": {"GET": VIEW, "*": MANAGE_BROKERS},
    "api-body-schema": MANAGE_BROKERS,
    "api-body-mappings": {"GET": VIEW, "*": MANAGE_BROKERS},
    "api-body-mapping": MANAGE_BROKERS,
    "api-redaction-rule": MANAGE_REDACTION,
    "api-roles": MANAGE_USERS,
    "api-claim-mappings": MANAGE_USERS,
    "api-tokens": SIGNED_IN,
    "api-channels": MANAGE_USERS,
    "api-channel": MANAGE_USERS,
    "api-channel-test": MANAGE_USERS,
    "api-subscriptions": MANAGE_USERS,
    "api-deliveries": MANAGE_USERS,
    "api-brokers": {"GET": VIEW, "*": MANAGE_BROKERS},
    "api-brokers-test": MANAGE_BROKERS,
    # A broker's default for new places (PATCH): an operator who may act on the whole broker.
    "api-broker": {"GET": VIEW, "*": ACT},
    "api-broker-discover": ACT,
    "api-places": VIEW,
    # Keeping a place in custody (PATCH) is an operator's decision, like a capture.
    "api-place": {"GET": VIEW, "*": ACT},
    "api-place-capture": ACT,
    "api-place-shovel": ACT,
    "api-letters": VIEW,
    # Saved views: anyone who may view keeps their own; the service lets only a view's owner (or
    # an admin who manages users) change or delete it.
    # Objectives on how long letters wait: read by all, set and deleted by operators.
    "api-objectives": {"GET": VIEW, "*": ACT},
    "api-objective": {"GET": VIEW, "*": ACT},
    "api-views": VIEW,
    "api-view": VIEW,
    # One's own subscription to a view's new letters, by e-mail: anyone who may open the view.
    "api-view-subscription": VIEW,
    # Letters leave as files: a right of its own (operators and admins), masked and scoped.
    "api-letters-export": EXPORT,
    "api-group-export": EXPORT,
    "api-job-export": EXPORT,
    # Letters from another console's export come in as an admin's (of every place: the service).
    "api-imports": MANAGE_BROKERS,
    "api-letter": VIEW,
    # Marking a letter "investigating": an operator's.
    "api-letter-mark": ACT,
    "api-letter-edit-replay": ACT,
    # Lifting a safeguard lets automation replay again: acting on letters, as a replay is.
    "api-letter-release": ACT,
    "api-origins": VIEW,
    "api-origin-close-breaker": ACT,
    "api-jobs": {"GET": VIEW, "*": ACT},
    "api-jobs-preview": ACT,
    "api-job": VIEW,
    "api-job-cancel": ACT,
    "api-job-pause": ACT,
    "api-job-resume": ACT,
    "api-approvals": VIEW,
    "api-job-approve": ACT,
    "api-job-refuse": ACT,
    "api-audit": VIEW,
    "api-audit-verify": VIEW,
    "api-schema": VIEW,
    "api-docs": VIEW,
}

#: Requests whose posted data asks for more than their URL's permission:
#: (url name, field, value) -> permission. Purging is one of the letter actions.
DATA_PERMISSIONS: dict[tuple[str, str, str], str] = {
    ("action-preview", "action", "purge"): PURGE,
    ("letters-preview", "action", "purge"): PURGE,
    ("api-jobs", "action", "purge"): PURGE,
}

#: Methods that only read: a rule given per method falls back to "GET" for these.
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class Unclassified(LookupError):
    """A URL name the policy does not know: refused until someone classifies it."""


def required(url_name: str | None, method: str, data=None) -> list[str]:
    """The permission codenames (or [PUBLIC] / [SIGNED_IN]) a request needs; ``data`` is what
    it posted (a QueryDict or a dict), read for DATA_PERMISSIONS."""
    rule = URL_PERMISSIONS.get(url_name or "")
    if rule is None:
        raise Unclassified(url_name)
    method = method.upper()
    if isinstance(rule, str):
        needed = rule
    elif method in rule:
        needed = rule[method]
    elif method in SAFE_METHODS and "GET" in rule:
        needed = rule["GET"]
    else:
        needed = rule["*"]
    extra = []
    if data is not None and method not in SAFE_METHODS:
        for (name, field, value), permission in DATA_PERMISSIONS.items():
            if name == url_name and hasattr(data, "get") and data.get(field) == value:
                extra.append(permission)
    return [needed, *extra]
