"""A dead place's letters: filters in the query string, keyset pages, bulk actions."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import BinaryField
from django.db.models.functions import Substr
from django.shortcuts import get_object_or_404, render

from console.access.redaction_policy import mask_envelopes, mask_previews
from console.access.scope import visible
from console.brokers import adapter_class
from console.brokers.values import PREVIEW_CHARS, body_preview
from console.models import DeadPlace, Job
from console.services.samples import place_trend
from console.services.selection import SelectionError, visible_matches
from console.web.action_forms import ShovelForm
from console.web.charts import Chart, Series, line_chart
from console.web.forms import FILTER_PREFIX, LetterFilterForm
from console.web.paging import page_after, page_key

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
    params, after = {**filters, "place": place.pk}, request.GET.get("after")
    matches, matching, exact, at_least, error = None, 0, True, False, ""
    try:
        # For a viewer, filters on content count only what the masked letters still show.
        counted = visible_matches(request.user, params)
        matching, exact = capped_count(counted.letters)
        at_least = not counted.complete
        matches = visible_matches(request.user, params, after=page_key(after)) if after else counted
    except SelectionError as exc:
        error = str(exc)
    page = None
    if matches is not None:
        head = Substr("body", 1, PREVIEW_CHARS * 4, output_field=BinaryField())
        page = page_after(matches.letters.defer("body").annotate(body_head=head), after)
        if page.next_key is None and not matches.complete:
            page.next_key = matches.checked_to  # more candidates remain to be confirmed
        for letter in page.rows:
            letter.preview = body_preview(letter.body_head, letter.body_size)
        mask_previews(request.user, page.rows)
        mask_envelopes(request.user, page.rows)
    context = {
        "place": place,
        "capabilities": capability_rows(place),
        "filter_form": filter_form,
        "hidden_filter": LetterFilterForm(initial=filters, prefix=FILTER_PREFIX),
        "filters_active": bool(filters),
        "filter_error": error,
        "matching": matching,
        "matching_exact": exact,
        # A viewer's content filter confirmed only the first candidates: "at least".
        "matching_at_least": at_least,
        "preselect_all": request.GET.get("select_all") == "1",
        "page": page,
        "charts": trend_charts(place),
        # The whole-queue move is offered only where the broker can do it by itself.
        "shovel_form": ShovelForm() if adapter_class(place.broker.kind).can_move_server_side else None,
        "keep_job": visible(request.user, Job.objects.filter(kind="keep", place=place)).order_by("-id").first(),
    }
    return render(request, "web/place.html", context)
