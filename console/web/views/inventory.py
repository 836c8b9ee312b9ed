"""The inventory: every broker with its health, every dead place, and their buttons."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.brokers import BrokerError
from console.models import Broker, DeadPlace, LetterState
from console.services.brokers import do_discover
from console.services.jobs import JobError, do_capture
from console.web.forms import ReasonForm


@login_required
def inventory(request):
    places = (
        DeadPlace.objects.select_related("broker")
        .annotate(held=Count("letters", filter=Q(letters__state=LetterState.HELD)))
        .order_by("broker__name", "scope", "name")
    )
    by_broker: dict[int, list[DeadPlace]] = {}
    for place in places:
        by_broker.setdefault(place.broker_id, []).append(place)
    brokers = [(broker, by_broker.get(broker.pk, [])) for broker in Broker.objects.order_by("name")]
    return render(request, "web/inventory.html", {"brokers": brokers})


@login_required
@require_POST
def discover(request, broker_id: int):
    broker = get_object_or_404(Broker, pk=broker_id)
    try:
        places = do_discover(broker, actor=request.user)
    except BrokerError as exc:
        messages.error(request, f"Discovery on {broker.name} failed: {exc.message}")
    else:
        messages.success(request, f"Discovery on {broker.name} found {len(places)} dead places.")
    return redirect("inventory")


@login_required
@require_POST
def capture(request, place_id: int):
    place = get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Capture from {place.name}: a reason is required.")
        return redirect("inventory")
    try:
        job = do_capture(place, actor=request.user, reason=form.cleaned_data["reason"])
    except JobError as exc:
        messages.error(request, f"Capture from {place.name}: {exc}")
        return redirect("inventory")
    return redirect("job", job.pk)
