"""Keeping a place in custody from its page, and a broker's default for new places from its
page (console.services.keeping: audited, scope-checked)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from console.models import Broker, DeadPlace
from console.services.keeping import KeepError, do_keep, do_keep_new_places
from console.web.forms import ReasonForm


def _switch(request) -> tuple[bool, str]:
    """The switch the form asks for ("on" or "off") and its reason ("" when none was given)."""
    return request.POST.get("keep") == "on", ReasonForm.given(request.POST)


@login_required
@require_POST
def place_keep(request, place_id: int):
    place = get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)
    keep, reason = _switch(request)
    try:
        do_keep(place, keep, actor=request.user, reason=reason)
    except KeepError as exc:
        messages.error(request, f"Keeping {place.name} in custody: {exc}")
    else:
        messages.success(request, f"{place.name} is {'now' if keep else 'no longer'} kept in custody.")
    return redirect("place", place.pk)


@login_required
@require_POST
def broker_keep_new(request, broker_id: int):
    broker = get_object_or_404(Broker, pk=broker_id)
    keep, reason = _switch(request)
    try:
        do_keep_new_places(broker, keep, actor=request.user, reason=reason)
    except KeepError as exc:
        messages.error(request, f"New places of {broker.name}: {exc}")
    else:
        messages.success(request, f"Places {broker.name} gets from now on are {'' if keep else 'not '}kept in custody.")
    return redirect("broker", broker.pk)
