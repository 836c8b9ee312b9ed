"""The place page's "Move the whole queue on the broker": a shovel job (console.jobs.kinds.shovel)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from console.jobs.door.requests import request_job
from console.models import DeadPlace
from console.services.jobs import JobError
from console.web.action_forms import ShovelForm


@login_required
@require_POST
def place_shovel(request, place_id: int):
    place = get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)
    form = ShovelForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{form.fields[name].label}: {' '.join(str(e) for e in errors)}"
                             for name, errors in form.errors.items())
        messages.error(request, f"Move of the whole queue {place.name}: {problems}")
        return redirect("place", place.pk)
    try:
        job = request_job("shovel", place=place, actor=request.user, **form.cleaned_data)
    except JobError as exc:
        messages.error(request, f"Move of the whole queue {place.name}: {exc}")
        return redirect("place", place.pk)
    return redirect("job", job.pk)
