"""A dead place's letters: filters in the query string, keyset pages, bulk actions."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import BinaryField
from django.db.models.functions import Substr
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.brokers import adapter_class
from console.models import DeadPlace, Job
from console.services.jobs import JobError, do_letters_job
from console.services.samples import place_trend
from console.services.selection import SelectionError, filter_letters
from console.web.charts import Chart, Series, line_chart
from console.web.display import PREVIEW_CHARS, body_preview
from console.web.forms import LetterFilterForm, LettersActionForm
from console.web.paging import page_after

#: The filter's hidden copy inside the action form is prefixed, since "reason" means the
#: failure reason in the filter and the operator's reason in the action.
FILTER_PREFIX = "filter"


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


def allowed_actions(place: DeadPlace) -> list[str]:
    """The bulk actions this place's adapter supports, in the order the form shows them."""
    capabilities = adapter_class(place.broker.kind).capabilities()
    actions = [Job.Kind.REPLAY, Job.Kind.MARK_FAILED, Job.Kind.PURGE]
    if capabilities.get("move"):
        actions.append(Job.Kind.MOVE)
    return actions


def _place(place_id: int) -> DeadPlace:
    return get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)


#: Up to this many matching letters are counted exactly; past it the page says "more than".
#: Counting is the one part of the page whose cost grows with the place (a body-text filter
#: reads every body), so it is bounded; 10,000 letters cost tens of milliseconds at most.
COUNT_CAP = 10_000


def capped_count(letters, cap: int | None = None) -> tuple[int, bool]:
    """(count, exact): the exact count when it is at most ``cap``, else (cap, False)."""
    cap = COUNT_CAP if cap is None else cap
    found = letters.order_by().values("id")[: cap + 1].count()
    return (found, True) if found <= cap else (cap, False)


def trend_charts(place: DeadPlace) -> list[Chart]:
    """Depth and arrivals of the place over the last day, from the periodic samples."""
    points = place_trend(place.pk)
    depth = [
        Series("Depth on the broker", [(p.at, p.depth) for p in points if p.depth is not None]),
        Series("Held in custody", [(p.at, p.held) for p in points]),
    ]
    arrivals = [Series("Letters captured", [(p.at, p.arrivals) for p in points])]
    return [
        line_chart(f"Depth of {place.name}, last 24 hours", depth),
        line_chart(f"Arrivals in {place.name}, last 24 hours", arrivals),
    ]


@login_required
def place_letters(request, place_id: int):
    place = _place(place_id)
    filter_form = LetterFilterForm(request.GET)
    filters = filter_form.filter_values()
    letters, matching, exact, error = None, 0, True, ""
    try:
        letters = filter_letters({**filters, "place": place.pk})
        matching, exact = capped_count(letters)
    except SelectionError as exc:
        error = str(exc)
    page = None
    if letters is not None:
        head = Substr("body", 1, PREVIEW_CHARS * 4, output_field=BinaryField())
        page = page_after(letters.defer("body").annotate(body_head=head), request.GET.get("after"))
        for letter in page.rows:
            letter.preview = body_preview(letter.body_head, letter.body_size)
    context = {
        "place": place,
        "capabilities": capability_rows(place),
        "filter_form": filter_form,
        "hidden_filter": LetterFilterForm(initial=filters, prefix=FILTER_PREFIX),
        "filters_active": bool(filters),
        "filter_error": error,
        "matching": matching,
        "matching_exact": exact,
        "preselect_all": request.GET.get("select_all") == "1",
        "page": page,
        "charts": trend_charts(place),
        "action_form": LettersActionForm(allowed_actions=allowed_actions(place)),
    }
    return render(request, "web/place.html", context)


@login_required
@require_POST
def place_action(request, place_id: int):
    place = _place(place_id)
    form = LettersActionForm(request.POST, allowed_actions=allowed_actions(place))
    back = reverse("place", args=[place.pk])
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect(back)
    data = form.cleaned_data
    if data["select_all"]:
        filters = LetterFilterForm(request.POST, prefix=FILTER_PREFIX).filter_values()
        selection = {"filter": {**filters, "place": str(place.pk)}}
    else:
        # Only letters of this place, whatever ids were posted.
        ids = list(place.letters.filter(id__in=data["ids"]).values_list("id", flat=True))
        selection = {"ids": ids}
    try:
        job = do_letters_job(
            data["action"], actor=request.user, reason=data["reason"], target=data["target"], **selection
        )
    except JobError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    return redirect("job", job.pk)
