"""A dead place's letters: filters in the query string, keyset pages, bulk actions."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from console.access.scope import visible
from console.brokers import adapter_class
from console.models import DeadPlace, Job
from console.services.objectives import objectives_of_places
from console.web.action_forms import ShovelForm
from console.web.forms import FILTER_PREFIX, LetterFilterForm
from console.web.letter_lists import listing
from console.web.paging import sort_named
from console.web.place_charts import trend_charts

CAPABILITY_LABELS = {
    "peek": "Browse without changing messages",
    "move": "Move to a chosen queue",
    "server_side_move": "Server-side move",
}


def kind_capabilities(kind: str) -> list[tuple[str, bool]]:
    """(label, able) for each capability flag of a broker kind's adapter."""
    capabilities = adapter_class(kind).capabilities()
    return [(CAPABILITY_LABELS.get(name, name.replace("_", " ")), able) for name, able in capabilities.items()]


def capability_rows(place: DeadPlace) -> list[tuple[str, bool]]:
    """(label, able) for each capability flag of the place's adapter."""
    return kind_capabilities(place.broker.kind)


def _place(place_id: int) -> DeadPlace:
    return get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)


@login_required
def place_letters(request, place_id: int):
    place = _place(place_id)
    filter_form = LetterFilterForm(request.GET)
    filters = filter_form.filter_values()
    found = listing(request.user, {**filters, "place": place.pk}, request.GET.get("after"),
                    sort=sort_named(request.GET.get("sort")))
    context = {
        "place": place,
        "capabilities": capability_rows(place),
        "filter_form": filter_form,
        "hidden_filter": LetterFilterForm(initial=filters, prefix=FILTER_PREFIX),
        "filters_active": bool(filters),
        "found": found,
        "preselect_all": request.GET.get("select_all") == "1",
        "charts": trend_charts(request.user, place),
        "objectives": objectives_of_places(request.user, [place.pk]).get(place.pk, []),
        "objective_action": reverse("objective-new", args=[place.pk]),
        # The whole-queue move is offered only where the broker can do it by itself.
        "shovel_form": ShovelForm() if adapter_class(place.broker.kind).can_move_server_side else None,
        "keep_job": visible(request.user, Job.objects.filter(kind="keep", place=place)).order_by("-id").first(),
    }
    return render(request, "web/place.html", context)
