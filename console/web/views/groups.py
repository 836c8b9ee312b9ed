"""Failure groups: letters grouped by fingerprint, across all places or in one place."""

from __future__ import annotations

from datetime import UTC, datetime, time

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from console.access.redaction_policy import mask_envelopes
from console.access.scope import scope_of, visible
from console.models import DeadPlace, FailureGroupHistory, GroupTriage, LetterState
from console.services.analytics import group_title
from console.services.filtersets import ANY_STATE, group_query
from console.services.group_work import matching_fingerprints, triage
from console.services.groups import Among, daily_counts, failure_groups
from console.services.history import history_groups
from console.web.charts import Chart, Series, line_chart

#: Groups drawn in the chart over time; the table lists more.
CHARTED_GROUPS = 5
#: Groups listed on the history page.
HISTORY_GROUPS = 50


def group_label(group) -> str:
    """How a group is named in a chart's legend: its sample exception and short fingerprint."""
    return f"{group.exception_type or 'no exception'} [{group.fingerprint[:8] or 'none'}]"


def groups_chart(params: dict, among: Among, groups: list, title: str) -> Chart:
    """Letters (of ``among``) per day of the largest groups over the last 30 days."""
    top = groups[:CHARTED_GROUPS]
    counts = daily_counts(params, [g.fingerprint for g in top], among)
    return line_chart(title, [Series(group_label(g), counts[g.fingerprint]) for g in top], daily=True)


@login_required
def group_list(request, place_id: int | None = None):
    """The failure groups (largest first), a chart of the top ones, and links to act on them."""
    place = get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id) if place_id else None
    query = group_query(request.GET, strict=False)  # /api/groups/'s filter set; a wrong value counts as none
    state = query["state"]
    params = {"place": place.pk} if place else {}
    if state != ANY_STATE:
        params["state"] = state
    # Counted over the letters the user may see: a limited user's groups, counts, origins,
    # places and samples come from their places alone.
    among = Among(request.user)
    work = {key: query[key] for key in ("status", "owner", "tag")}
    if any(work.values()):
        found, kept = matching_fingerprints(**work)
        among = Among(request.user, frozenset(found), excluded=not kept)
    groups = failure_groups(params, among)
    mask_envelopes(request.user, groups)  # the sample exception comes from a letter's headers
    places = DeadPlace.objects.select_related("broker").in_bulk({pid for g in groups for pid in g.places})
    decided = triage([group.fingerprint for group in groups])
    for group in groups:
        group.triage = decided.get(group.fingerprint)  # type: ignore[attr-defined]  # the page's, beside the group
    rows = [(group, [places[pid] for pid in group.places if pid in places]) for group in groups]
    where = place.name if place else "all places"
    context = {
        "place": place,
        "state": state,
        "state_choices": [(ANY_STATE, "any state"), *LetterState.choices],
        "link_state": "" if state == ANY_STATE else state,
        "rows": rows,
        "work": work,
        "status_choices": GroupTriage.Status.choices,
        "chart": groups_chart(params, among, groups,
                              f"Letters per day in the {CHARTED_GROUPS} largest groups, {where}"),
    }
    return render(request, "web/groups.html", context)


@login_required
def group_history(request):
    """Failure groups over the whole history, as the pipeline's ``groups`` job last computed
    them (custody and the archive together), with each group's letters per day. The pipeline
    counts over every place at once, so a user limited to some sees none of it (the page says
    so) and reads their places' groups in custody instead."""
    rows = history_groups(groups=visible(request.user, FailureGroupHistory.objects.all()), limit=HISTORY_GROUPS)
    mask_envelopes(request.user, rows)
    top = rows[:CHARTED_GROUPS]
    chart = line_chart(
        f"Letters per day in the {CHARTED_GROUPS} largest groups of the whole history",
        [
            Series(group_title(row["exception_type"], row["reason"], row["fingerprint"]),
                   [(datetime.combine(day, time.min, tzinfo=UTC), count) for day, count in row["trend"]])
            for row in top
        ],
        daily=True,
    )
    computed_at = max((row["computed_at"] for row in rows), default=None)
    return render(request, "web/groups_history.html", {"rows": rows, "chart": chart, "computed_at": computed_at,
                                                       "limited": not scope_of(request.user).unlimited})
