"""The safeguards on automation: releasing a quarantined letter (its page offers it), the
origins with their breaker, streak and effective policy, and closing a breaker."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.access.redaction_policy import mask_origins
from console.access.scope import visible
from console.models import DeadLetter, Origin
from console.services.policy import effective_policies
from console.services.safeguards import do_close_breaker, do_release


@login_required
@require_POST
def letter_release(request, letter_id: int):
    letter = get_object_or_404(DeadLetter, pk=letter_id)
    do_release(letter, actor=request.user, reason=request.POST.get("reason", ""))
    messages.success(request, f"Letter {letter.pk} is released: rules may replay it again.")
    return redirect("letter", letter.pk)


@login_required
def origin_list(request):
    """Every origin the user may see, with its breaker, streak and policy (asked of each broker)."""
    origins = list(visible(request.user, Origin.objects.select_related("broker")))
    policies = effective_policies(origins, reader=request.user)
    mask_origins(request.user, origins)
    rows = [(origin, policies[origin.pk]) for origin in origins]
    return render(request, "web/origins.html", {"rows": rows})


@login_required
@require_POST
def origin_close_breaker(request, origin_id: int):
    origin = get_object_or_404(Origin.objects.select_related("broker"), pk=origin_id)
    do_close_breaker(origin, actor=request.user, reason=request.POST.get("reason", ""))
    messages.success(request, f"The breaker of {origin.name} is closed: rules may replay to it again.")
    return redirect("origins")
