"""Forms of the pages. Validation of meaning (states, selections) stays in the services."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone

from console.models import Job, LetterState

ACTION_LABELS = {
    Job.Kind.REPLAY: "Replay to origin",
    Job.Kind.MARK_FAILED: "Mark failed",
    Job.Kind.PURGE: "Purge",
    Job.Kind.MOVE: "Move to queue",
}


class ReasonForm(forms.Form):
    """A reason for an audited action (capture, cancel)."""

    reason = forms.CharField(max_length=2000, required=True, strip=True)


#: "Older than" presets of the age filter: (hours, label).
AGE_PRESETS = [(1, "1 hour"), (6, "6 hours"), (24, "1 day"), (24 * 7, "7 days")]


class LetterFilterForm(forms.Form):
    """The filters of a place's letters; they live in the query string.

    Every field maps to a key of console.services.selection.filter_letters, except the
    "older than" preset, which becomes ``until`` (now minus that many hours).
    """

    origin = forms.CharField(required=False, max_length=500)
    reason = forms.CharField(required=False, max_length=50, label="Failure reason")
    exception = forms.CharField(required=False, max_length=500, label="Exception type")
    fingerprint = forms.CharField(required=False, max_length=32, label="Failure group")
    state = forms.ChoiceField(required=False, choices=[("", "any state"), *LetterState.choices])
    header = forms.CharField(required=False, max_length=500, label="Header name")
    header_value = forms.CharField(required=False, max_length=2000, label="Header value")
    q = forms.CharField(required=False, max_length=2000, label="Body contains")
    since = forms.DateTimeField(
        required=False, label="Captured since",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    until = forms.DateTimeField(
        required=False, label="Captured before",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    older_than = forms.TypedChoiceField(
        required=False, coerce=int, empty_value=None, label="Older than",
        choices=[("", "any age"), *[(str(hours), label) for hours, label in AGE_PRESETS]],
    )

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


class LettersActionForm(forms.Form):
    """A bulk action on the checked letters, or on every letter matching the filter."""

    action = forms.ChoiceField(choices=list(ACTION_LABELS.items()))
    reason = forms.CharField(max_length=2000, strip=True, label="Reason (for the audit)")
    target = forms.CharField(required=False, max_length=500, label="Target queue (move)")
    select_all = forms.BooleanField(required=False)

    def __init__(self, *args, allowed_actions: list[str], **kwargs) -> None:
        # Its own ids: the filter form on the same page has a "reason" field too.
        kwargs.setdefault("auto_id", "action_%s")
        super().__init__(*args, **kwargs)
        self.fields["action"].choices = [(a, ACTION_LABELS[a]) for a in allowed_actions]

    def clean(self):
        cleaned = super().clean()
        # The checkboxes are many inputs of one name; not a declared field.
        cleaned["ids"] = [int(i) for i in self.data.getlist("ids") if str(i).isdigit()]
        if not cleaned.get("select_all") and not cleaned.get("ids"):
            raise forms.ValidationError("Tick some letters, or select all matching.")
        return cleaned


class AuditFilterForm(forms.Form):
    actor = forms.CharField(required=False, max_length=150)
    action = forms.CharField(required=False, max_length=50)
