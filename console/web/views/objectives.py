"""Objectives on a place's page (console.services.objectives): setting one (D in minutes) and
deleting one, by operators."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.access.scope import visible
from console.models import DeadPlace, Objective
from console.refusals import Refusal
from console.services.objectives import do_delete_objective, do_set_objective
from console.services.parsing import ascii_whole_number


@require_POST
def objective_new(request, place_id: int):
    place = get_object_or_404(visible(request.user, DeadPlace.objects.all()), pk=place_id)
    minutes = ascii_whole_number(request.POST.get("minutes", ""), 1, 366 * 24 * 60)
    percent = request.POST.get("percent", "").strip()
    try:
        if minutes is None:
            raise Refusal("minutes (D) is a whole number of minutes")
        share = float(percent) if percent else None
        objective = do_set_objective(actor=request.user, name=request.POST.get("name", ""),
                                     kind=request.POST.get("kind", ""), seconds=minutes * 60, percent=share,
                                     place=place, owner=request.POST.get("owner", "").strip())
    except (Refusal, ValueError) as exc:
        messages.error(request, f"The objective was not set: {exc}")
    else:
        messages.success(request, f"Objective {objective.name!r} set: {objective.get_state_display()} now.")
    return redirect(f"{reverse('place', args=[place.pk])}#objectives")


@require_POST
def objective_delete(request, objective_id: int):
    objective = get_object_or_404(visible(request.user, Objective.objects.all()), pk=objective_id)
    place_id = objective.place_id
    do_delete_objective(objective, actor=request.user)
    messages.success(request, f"Objective {objective.name!r} deleted.")
    return redirect("place", place_id) if place_id else redirect("inventory")
