"""One base for every request the console refuses, and the HTTP status it answers with.

A service, a job kind or a guard that will not do what it was asked raises a :class:`Refusal`
(or one of its kinds below) with a message for the person: why, and what to do instead. Views do
not catch them one by one: the API maps every refusal once (console.api.errors.handle_exception,
DRF's EXCEPTION_HANDLER), the pages once (console.web.refusals.RefusalMiddleware), each to the
status the refusal's class names. The domain errors (JobError, RuleError, GroupError...) derive
from these, so whoever raises one does not need to know about HTTP.

No Django here: every layer may import it.
"""

from __future__ import annotations


class Refusal(ValueError):
    """A request the console will not carry out, as asked: 400 (the request itself is wrong).

    Still a ValueError, as the domain errors were before this base existed."""

    status = 400


class Forbidden(Refusal):
    """The person may not do this (their role, their scope, or asking for themselves): 403."""

    status = 403


class Missing(Refusal):
    """What the request names is not there, or not there for this person: 404."""

    status = 404


class Conflict(Refusal):
    """The request is fine but the thing it acts on is not in a state that allows it (a job that
    has ended, an approval that expired): 409."""

    status = 409


def require_reason(reason: str, error: type[Refusal] = Refusal, what: str = "") -> str:
    """``reason`` stripped, or ``error`` when there is none: every change a person makes says why
    (it goes into the audit). ``what`` names the change in the message, e.g. "to refuse a job"."""
    reason = (reason or "").strip()
    if not reason:
        raise error(f"a reason is required{' ' + what if what else ''}")
    return reason
