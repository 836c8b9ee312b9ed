"""Failure analytics as the pipeline's ``analytics`` job last computed them, read for a page or
the API: the figures over all letters, per failure group and per origin, the busiest names and
the arrivals grid, with the links to the letters behind each figure.

The pipeline counts over every place at once, so, as for the failure groups of the history, a
user limited to some places gets none of it. Consumer and host names come from framework
headers, so a user who sees content masked sees them masked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from django.utils import timezone

from console.access.actors import Actor
from console.access.redaction_policy import for_user, mask_envelopes
from console.access.scope import scope_of, visible
from console.models import (
    AnalyticsRun,
    ArrivalCell,
    Broker,
    BusyName,
    DeadLetter,
    FailureGroupHistory,
    Objective,
    ObjectiveWeek,
    OutcomeStat,
)
from console.services import match_words
from console.services.objectives import readable_objectives

#: Groups and origins listed, largest first.
LISTED = 50
#: A run asked for or started this long ago and never ended is taken for one whose worker
#: died: the page no longer says the analytics are being computed.
RUN_FORGOTTEN = timedelta(minutes=30)


def letters_url(**filters: Any) -> str:
    """The letters page (every place the reader may see) filtered by the keys of
    console.services.selection; None values are left out, and texts quoted to be found exactly
    (console.services.match_words), as the figure the link is drawn from counted them."""
    return reverse("letters") + "?" + urlencode({
        k: match_words.quoted(v) if k in match_words.FILTER_KEYS else v
        for k, v in filters.items() if v not in (None, "")})


def group_title(exception_type: str, reason: str, fingerprint: str) -> str:
    """A failure group as a chart names it: its exception type, else its letters' reason, and
    the start of its fingerprint."""
    return f"{exception_type or reason or 'no exception recorded'} [{fingerprint[:8]}]"


@dataclass
class Outcome:
    """One row of figures (console.models.OutcomeStat) with what it is about and its links."""

    stat: OutcomeStat
    label: str = ""
    exception_type: str = ""
    filters: dict[str, Any] = field(default_factory=dict)
    group_url: str = ""
    #: Why a group's letters died (the broker's reason), for a group that names no exception.
    reason: str = ""

    @property
    def group_title(self) -> str:
        return group_title(self.exception_type, self.reason, self.label)

    def url(self, **more: Any) -> str:
        return letters_url(**self.filters, **more)

    @property
    def links(self) -> dict[str, str]:
        """Per figure, the letters (still in custody) behind it."""
        return {
            "letters": self.url(), "resolved": self.url(state="replayed,failed"),
            "replayed": self.url(state="replayed"), "failed": self.url(state="failed"),
            "came_back": self.url(state="replayed", came_back="true"),
            "stayed_away": self.url(state="replayed", came_back="false"),
            "recurrences": self.group_url or self.url(),
        }


@dataclass
class Analytics:
    limited: bool
    computing: bool = False  # a run is asked for or under way (``being_computed``)
    computed_at: datetime | None = None
    overall: Outcome | None = None
    groups: list[Outcome] = field(default_factory=list)
    origins: list[Outcome] = field(default_factory=list)
    busiest: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    arrivals: dict[tuple[int, int], int] = field(default_factory=dict)
    #: Each objective on a place or an origin with its weeks, the latest first.
    objectives: list[tuple[Objective, list[ObjectiveWeek]]] = field(default_factory=list)


def analytics_for(user: Actor, *, listed: int = LISTED) -> Analytics:
    if not scope_of(user).unlimited:
        return Analytics(limited=True)
    stats = OutcomeStat.objects.all()
    overall = stats.filter(kind=OutcomeStat.Kind.ALL).first()
    if overall is None:
        return Analytics(limited=False, computing=being_computed())
    brokers = dict(Broker.objects.values_list("name", "pk"))
    groups = list(stats.filter(kind=OutcomeStat.Kind.GROUP).order_by("-letters", "fingerprint")[:listed])
    samples = _group_samples(user, [stat.fingerprint for stat in groups])
    origins = stats.filter(kind=OutcomeStat.Kind.ORIGIN).order_by("-letters", "broker", "origin")[:listed]
    return Analytics(
        limited=False,
        computed_at=overall.computed_at,
        overall=Outcome(overall, "all letters"),
        groups=[Outcome(stat, stat.fingerprint, samples.get(stat.fingerprint, ("", ""))[0],
                        {"fingerprint": stat.fingerprint}, reverse("group", args=[stat.fingerprint]),
                        reason=samples.get(stat.fingerprint, ("", ""))[1])
                for stat in groups],
        origins=[Outcome(stat, f"{stat.origin or '(none)'} on {stat.broker}", "",
                         {"origin": stat.origin, "broker": brokers.get(stat.broker)}) for stat in origins],
        busiest=_busiest(user, brokers),
        arrivals={(cell.weekday, cell.hour): cell.letters for cell in ArrivalCell.objects.all()},
        objectives=_objective_weeks(user),
    )


def _objective_weeks(user: Actor) -> list[tuple[Objective, list[ObjectiveWeek]]]:
    """The objectives on places and origins the reader may see, each with its weeks."""
    objectives = list(readable_objectives(user).filter(view__isnull=True).select_related(
        "place__broker", "origin__broker"))
    weeks: dict[int, list[ObjectiveWeek]] = {}
    for week in ObjectiveWeek.objects.filter(objective__in=objectives):
        weeks.setdefault(week.objective_id, []).append(week)
    return [(objective, weeks.get(objective.pk, [])) for objective in objectives]


def _group_samples(user: Actor, fingerprints: list[str]) -> dict[str, tuple[str, str]]:
    """Per fingerprint, the exception type and reason of a sample letter, masked for the reader:
    from the history the pipeline's ``groups`` job computed, else, for a group it has not seen
    (it runs apart from ``analytics``, and not at all before its first hour), from the group's
    first letter in custody."""
    found: dict[str, Any] = {g.fingerprint: g for g in FailureGroupHistory.objects.filter(fingerprint__in=fingerprints)}
    unseen = [fingerprint for fingerprint in fingerprints if fingerprint not in found]
    if unseen:
        first = (visible(user, DeadLetter.objects.filter(fingerprint__in=unseen)).defer("body")
                 .order_by("fingerprint", "id").distinct("fingerprint"))
        found.update({letter.fingerprint: letter for letter in first})
    mask_envelopes(user, found.values())
    return {fingerprint: (sample.exception_type or "", sample.reason or "") for fingerprint, sample in found.items()}


def _busiest(user: Actor, brokers: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    redactor = for_user(user)
    found: dict[str, list[dict[str, Any]]] = {kind: [] for kind in BusyName.Kind.values}
    for busy in BusyName.objects.all():
        name = busy.name
        if busy.kind == BusyName.Kind.ORIGIN:
            url = letters_url(origin=name, broker=brokers.get(busy.broker))
        else:
            if redactor is not None:
                name = redactor.string(name)  # from framework headers: content
            url = letters_url(**{busy.kind: name})
        found[busy.kind].append({"name": name, "broker": busy.broker, "letters": busy.letters,
                                 "groups": busy.groups, "url": url})
    return found


def ask_for_analytics() -> None:
    """A computation is queued for the worker: the page says so from now on."""
    AnalyticsRun.objects.create()


@contextmanager
def computing_analytics() -> Iterator[None]:
    """Around a computation of the analytics: the run asked for (or a new one) is under way,
    then ended, whether it succeeded or not."""
    run = (AnalyticsRun.objects.filter(started_at__isnull=True, ended_at__isnull=True).order_by("asked_at").first()
           or AnalyticsRun())
    run.started_at = timezone.now()
    run.save()
    try:
        yield
    finally:
        AnalyticsRun.objects.filter(pk=run.pk).update(ended_at=timezone.now())


def being_computed() -> bool:
    """Whether a computation of the analytics was asked for or started lately and has not ended."""
    return AnalyticsRun.objects.filter(ended_at__isnull=True, asked_at__gte=timezone.now() - RUN_FORGOTTEN).exists()
