"""What the top bar shows beside its links: how many jobs wait for an approval the reader may
see (``approvals_waiting`` in every template, counted only when a page shows it)."""

from __future__ import annotations

from django.utils.functional import SimpleLazyObject

from console.access.scope import visible
from console.models import Job


def navigation(request) -> dict:
    """Context processor: ``approvals_waiting``, the jobs awaiting approval the user may see."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"approvals_waiting": SimpleLazyObject(
        lambda: visible(user, Job.objects.filter(status=Job.Status.AWAITING_APPROVAL)).count())}
