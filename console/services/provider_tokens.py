"""The audit of the identity provider's access tokens that the API refuses.

An accepted token is audited where it changes something: the role and limits its claims give
(console.services.claims, ``access.from_claims``) and whatever the script then does. A refused
one is audited here, as a refused sign-in is: who (the subject, only when the provider's
signature vouched for it), why, and from where; never the token or a piece of it.
"""

from __future__ import annotations

from django.db import transaction

from console.services import audit

REFUSED = "api.token.refused"
#: Who a refused token is audited as: nobody has proved who they are.
ANONYMOUS = "anonymous"


@transaction.atomic
def record_refused_token(*, issuer: str, reason: str, subject: str = "") -> None:
    """Audit one refused access token: the configured provider, the reason, the subject if any."""
    audit.record(REFUSED, actor=ANONYMOUS, target=subject, outcome="refused",
                 details={"provider": issuer, "subject": subject or None, "reason": reason})
