"""The query parameters of the console's lists, declared once per list (django-filter) and
shared by the page and the API where both exist. The letters' filter is its own module
(console.services.letter_filters); a number is ASCII digits, text is storable
(console.services.parsing).

The API applies a filter set strictly (``parsed``: a wrong parameter is a 400 naming it); a page
may apply only the parameters that parsed and show the others' errors beside their fields.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import Q, QuerySet
from django.http import QueryDict
from django_filters import ChoiceFilter, FilterSet

from console.models import AuditEvent, DeadPlace, Delivery, GroupTriage, Job, LetterState, Origin
from console.services.parsing import MomentFilter, NumberFilter, TextFilter, parsed


class PlaceFilterSet(FilterSet):
    """``/api/places/``."""

    broker = NumberFilter(field_name="broker_id", help_text="Broker id")

    class Meta:
        model = DeadPlace
        fields: list[str] = []


class OriginFilterSet(FilterSet):
    """``/api/origins/``."""

    broker = NumberFilter(field_name="broker_id", help_text="Broker id")

    class Meta:
        model = Origin
        fields: list[str] = []


class DeliveryFilterSet(FilterSet):
    """The delivery log (``/api/notifications/deliveries/``)."""

    channel = NumberFilter(field_name="channel_id", help_text="Channel id")

    class Meta:
        model = Delivery
        fields: list[str] = []


class AuditFilterSet(FilterSet):
    """The audit page, its exports and ``/api/audit/``. A place names the events about it and
    the job-level ones (purge, mark failed, pause...) of the jobs run there, which name the job,
    not the place."""

    actor = TextFilter(field_name="actor_name", max_length=150, label="Who", help_text="User name")
    action = TextFilter(field_name="action", max_length=50, widget=forms.TextInput(attrs={"list": "audit-actions"}),
                        help_text="e.g. replay, capture, job.requested")
    place = TextFilter(method="filter_place", max_length=500, widget=forms.TextInput(attrs={"list": "audit-places"}),
                       help_text="Dead place name")
    job = NumberFilter(field_name="job_id", min_value=1, label="Job id", widget=forms.NumberInput, help_text="Job id")
    letter = NumberFilter(method="filter_letter", min_value=1, label="Letter id", widget=forms.NumberInput,
                          help_text="Events that name this letter id")
    since = MomentFilter(field_name="at", lookup_expr="gte", label="From", help_text="At or after",
                         widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))
    until = MomentFilter(field_name="at", lookup_expr="lt", label="Before", help_text="Before",
                         widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))

    class Meta:
        model = AuditEvent
        fields: list[str] = []

    def filter_place(self, qs: QuerySet[AuditEvent], name: str, value: str) -> QuerySet[AuditEvent]:
        jobs_there = Job.objects.filter(place__name=value).values("id")
        return qs.filter(Q(place_name=value) | Q(job_id__in=jobs_there))

    def filter_letter(self, qs: QuerySet[AuditEvent], name: str, value: int) -> QuerySet[AuditEvent]:
        return qs.filter(letter_ids__contains=[value])


#: The groups' state parameter: a letter state, or every state.
ANY_STATE = "any"


class GroupFilterSet(FilterSet):
    """The groups page and ``/api/groups/``. Groups are counted, not a queryset of rows: the
    views read the parsed values (``group_query``) and count with them."""

    place = NumberFilter(min_value=1, help_text="Dead place id")
    state = ChoiceFilter(choices=[*LetterState.choices, (ANY_STATE, "any state")], method="as_parsed",
                         help_text="Letters in this state (default held), or any")
    status = ChoiceFilter(choices=GroupTriage.Status.choices, method="as_parsed")
    owner = TextFilter(max_length=150, method="as_parsed", help_text="Username")
    tag = TextFilter(max_length=50, method="as_parsed")

    class Meta:
        model = GroupTriage
        fields: list[str] = []

    def as_parsed(self, qs: QuerySet[GroupTriage], name: str, value: Any) -> QuerySet[GroupTriage]:
        return qs


def group_query(params: QueryDict, *, strict: bool) -> dict[str, Any]:
    """The groups' parameters as parsed: place (int or None), state (a letter state or "any",
    held when not given), status, owner, tag ("" when not given). ``strict`` (the API) refuses a
    wrong one with a 400; otherwise (the page) a wrong one counts as not given."""
    filterset = GroupFilterSet(params, queryset=GroupTriage.objects.none())
    if strict:
        parsed(filterset)
    else:
        filterset.is_valid()
    data = filterset.form.cleaned_data
    return {"place": data.get("place"), "state": data.get("state") or LetterState.HELD,
            **{key: (data.get(key) or "").strip() for key in ("status", "owner", "tag")}}
