"""Forms of the pages. Validation of meaning (states, selections) stays in the services."""

from __future__ import annotations

from datetime import UTC, timedelta

from django import forms
from django.utils import timezone

from console.models import LetterState
from console.services import match_words
from console.services.letter_filters import StatesField, TraceIdField
from console.services.selection import clean_filter


class ReasonForm(forms.Form):
    """A reason for an audited action (capture, keeping a place in custody): stripped and bounded
    here; that there is one is the service's check (console.refusals.require_reason)."""

    reason = forms.CharField(max_length=2000, required=False, strip=True)

    @classmethod
    def given(cls, data) -> str:
        """The reason in ``data``; "" when there is none or it is longer than a reason may be,
        which the service refuses with its message."""
        form = cls(data)
        return form.cleaned_data["reason"] if form.is_valid() else ""


#: "Older than" presets of the age filter: (hours, label).
AGE_PRESETS = [(1, "1 hour"), (6, "6 hours"), (24, "1 day"), (24 * 7, "7 days")]


class MomentField(forms.DateTimeField):
    """A date and time from a form, in UTC: PostgreSQL refuses offsets of 16 hours or more,
    which Python accepts, so every moment is converted before it reaches a query."""

    widget = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")

    def to_python(self, value):
        moment = super().to_python(value)
        if moment is None:
            return None
        if timezone.is_naive(moment):
            moment = timezone.make_aware(moment, UTC)
        return moment.astimezone(UTC)


class StatesChoiceField(StatesField):
    """The state filter as a list to pick one state from, which takes several comma separated
    too (``replayed,failed``), as the API's filter does and as the pages link to (the failure
    analytics' resolved letters); given such a list, the list shows it as a choice of its own.
    Cleaned, it is the states comma separated again, as console.services.selection takes them."""

    widget = forms.Select

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.widget.choices = [("", "any state"), *LetterState.choices]

    def clean(self, value):
        states = super().clean(value)
        return ",".join(states) if states else ""

    def offer(self, given: str | None) -> None:
        """Show ``given`` among the choices when it is a list of states (its words checked by
        :meth:`clean`, and escaped by the template)."""
        if given and "," in given:
            label = " or ".join(part.strip() for part in given.split(",") if part.strip())
            self.widget.choices = [*self.widget.choices, (given, label)]


#: The prefix of a letter filter's hidden copy inside an action's form (the place's page writes
#: it, the action's preview reads it back): "reason" means the failure reason in the filter and
#: the operator's reason in the action.
FILTER_PREFIX = "filter"


class LetterFilterForm(forms.Form):
    """The filters of a place's letters; they live in the query string.

    Every field maps to a key of console.services.selection.filter_letters, except the
    "older than" preset, which becomes ``until`` (now minus that many hours).
    """

    origin = forms.CharField(required=False, max_length=500)
    reason = forms.CharField(required=False, max_length=50, label="Failure reason")
    exception = forms.CharField(required=False, max_length=500, label="Exception type")
    fingerprint = forms.CharField(required=False, max_length=32, label="Failure group")
    state = StatesChoiceField(required=False, max_length=200)
    header = forms.CharField(required=False, max_length=500, label="Header name")
    header_value = forms.CharField(required=False, max_length=2000, label="Header value")
    q = forms.CharField(required=False, max_length=2000, label="Body contains")
    trace_id = TraceIdField(required=False, label="Trace id")
    since = MomentField(required=False, label="Captured since")
    until = MomentField(required=False, label="Captured before")
    older_than = forms.TypedChoiceField(
        required=False, coerce=int, empty_value=None, label="Older than",
        choices=[("", "any age"), *[(str(hours), label) for hours, label in AGE_PRESETS]],
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in match_words.FILTER_KEYS:  # how a word is read, on the field itself
            if name in self.fields:
                self.fields[name].widget.attrs.update(placeholder="a part, any case", title=match_words.HINT)
        given = self.data.get(self.add_prefix("state")) if self.is_bound else self.initial.get("state")
        states = self.fields["state"]
        assert isinstance(states, StatesChoiceField)
        states.offer(given if isinstance(given, str) else None)

    def filter_and_more(self) -> tuple[dict[str, str], dict[str, str]]:
        """(the whole filter, the keys of its query beyond the form's fields): the Letters page's,
        and a saved view's, where a query may also hold an analytics link's weekday..."""
        more = {key: value for key, value in clean_filter(self.data).items() if key not in self.fields}
        return {**more, **self.filter_values()}, more

    def filter_values(self) -> dict[str, str]:
        """The filter as console.services.selection takes it (valid fields only, non-empty)."""
        self.is_valid()  # fills cleaned_data with the fields that are valid, even when some are not
        values = {key: value for key, value in self.cleaned_data.items() if value not in (None, "")}
        hours = values.pop("older_than", None)
        if hours:
            cutoff = timezone.now() - timedelta(hours=hours)
            values["until"] = min(values.get("until", cutoff), cutoff)
        for key in ("since", "until"):
            if key in values:
                values[key] = values[key].isoformat()
        return values
