"""Objectives on a place's page and a view's (console.services.objectives): setting one (D in
minutes) and deleting one, by operators."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.access.scope import visible
from console.models import DeadPlace
from console.services.marks import MarkError
from console.services.objectives import ObjectiveError, do_delete_objective, do_set_objective, readable_objectives
from console.services.parsing import ascii_whole_number
from console.services.saved_views import view_for


@require_POST
def objective_new(request, place_id: int):
    place = get_object_or_404(visible(request.user, DeadPlace.objects.all()), pk=place_id)
    return _set(request, {"place": place}, f"{reverse('place', args=[place.pk])}#objectives")


@require_POST
def view_objective_new(request, view_id: int):
    """An objective on a saved view, from its page (set by people without limits: the service says)."""
    view = view_for(request.user, view_id)
    return _set(request, {"view": view}, f"{reverse('saved-view', args=[view.pk])}#objectives")


def _set(request, target: dict[str, Any], back: str):
    minutes = ascii_whole_number(request.POST.get("minutes", ""), 1, 366 * 24 * 60)
    try:
        if minutes is None:
            raise ObjectiveError("minutes (D) is a whole number of minutes")
        objective = do_set_objective(actor=request.user, name=request.POST.get("name", ""),
                                     kind=request.POST.get("kind", ""), seconds=minutes * 60,
                                     percent=_percent(request.POST.get("percent", "")),
                                     owner=request.POST.get("owner", "").strip(), **target)
    except (ObjectiveError, MarkError) as exc:  # what the person typed; a refusal of the person is a 403
        messages.error(request, f"The objective was not set: {exc}")
    else:
        messages.success(request, f"Objective {objective.name!r} set: {objective.get_state_display()} now.")
    return redirect(back)


def _percent(given: str) -> float | None:
    """P as typed: a number (1 to 100, checked by the service), or none."""
    given = given.strip()
    if not given:
        return None
    try:
        return float(given)
    except ValueError:
        raise ObjectiveError("percent (P) is a number") from None


@require_POST
def objective_delete(request, objective_id: int):
    objective = get_object_or_404(readable_objectives(request.user), pk=objective_id)
    place_id, view_id = objective.place_id, objective.view_id
    do_delete_objective(objective, actor=request.user)
    messages.success(request, f"Objective {objective.name!r} deleted.")
    if view_id:
        return redirect("saved-view", view_id)
    return redirect("place", place_id) if place_id else redirect("inventory")
