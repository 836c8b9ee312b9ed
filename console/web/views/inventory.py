"""The inventory: every broker with its health, every dead place, and their buttons."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Min, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from console.access.scope import visible
from console.brokers import BrokerError
from console.jobs.door.requests import request_job
from console.models import Broker, DeadPlace, LetterState
from console.services.brokers import do_discover
from console.services.jobs import JobError
from console.services.objectives import objectives_of_places
from console.services.samples import recent_arrivals
from console.web.charts import sparkline
from console.web.forms import ReasonForm
from console.web.views.places import kind_capabilities

#: Seconds between the page's refreshes of itself (htmx polling of the partial).
REFRESH_SECONDS = 10


def inventory_rows(user=None) -> list[tuple[Broker, list, list]]:
    """(broker, its capabilities, its places) with each place's custody counts and last hour.

    Only the database is read: broker health comes from the periodic check_brokers task,
    depths and the arrivals trend from sample_places, so a broker that is down cannot slow
    the page. ``user``: only what their scope allows.
    """
    hour_ago = timezone.now() - timedelta(hours=1)
    places = list(
        visible(user, DeadPlace.objects.select_related("broker"))
        .annotate(
            held=Count("letters", filter=Q(letters__state=LetterState.HELD)),
            oldest_held=Min("letters__captured_at", filter=Q(letters__state=LetterState.HELD)),
            captured_last_hour=Count("letters", filter=Q(letters__captured_at__gte=hour_ago)),
        )
        .order_by("broker__name", "scope", "name")
    )
    arrivals = recent_arrivals([p.pk for p in places])
    objectives = objectives_of_places(user, [p.pk for p in places])
    by_broker: dict[int, list[DeadPlace]] = {}
    for place in places:
        place.trend = sparkline(f"Arrivals in {place.name} over the last hour", arrivals[place.pk])
        place.judged_objectives = objectives.get(place.pk, [])
        by_broker.setdefault(place.broker_id, []).append(place)
    return [
        (broker, kind_capabilities(broker.kind), by_broker.get(broker.pk, []))
        for broker in visible(user, Broker.objects.order_by("name"))
    ]


@login_required
def inventory(request):
    """The whole page, or (for htmx polling) just the part that changes."""
    context = {"brokers": inventory_rows(request.user), "refresh_seconds": REFRESH_SECONDS, "now": timezone.now()}
    template = "web/partials/inventory_live.html" if request.htmx else "web/inventory.html"
    return render(request, template, context)


@login_required
@require_POST
def discover(request, broker_id: int):
    broker = get_object_or_404(Broker, pk=broker_id)
    try:
        places = do_discover(broker, actor=request.user)
    except BrokerError as exc:
        messages.error(request, f"Discovery on {broker.name} failed: {exc.message}")
    else:
        # Counted among the places the user may see: the others are not theirs to know of.
        seen = visible(request.user, DeadPlace.objects.filter(pk__in=[p.pk for p in places])).count()
        messages.success(request, f"Discovery on {broker.name} found {seen} dead places.")
    return redirect("inventory")


@login_required
@require_POST
def capture(request, place_id: int):
    place = get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)
    try:
        job = request_job("capture", place=place, actor=request.user, reason=ReasonForm.given(request.POST))
    except JobError as exc:
        messages.error(request, f"Capture from {place.name}: {exc}")
        return redirect("inventory")
    return redirect("job", job.pk)
