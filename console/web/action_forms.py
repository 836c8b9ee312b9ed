"""Forms of the acting pages: a bulk action's request and confirmation, and edit-and-replay.

They check what a person typed; what it means (states, selections, reasons) is checked again
by the services, which are the only way to change anything.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from django import forms

from console.jobs.kinds.pace import MAX_CANARY_WAIT_SECONDS, MAX_CONCURRENCY
from console.models import Job
from console.services.edit import tagged_headers
from console.services.jobs import JobError
from console.services.parsing import IntegerField, ascii_whole_number
from console.web.display import BODY_PAGE_LIMIT

ACTION_LABELS = {
    Job.Kind.REPLAY: "Replay to origin",
    Job.Kind.MOVE: "Move to queue",
    Job.Kind.MARK_FAILED: "Mark failed",
    Job.Kind.PURGE: "Purge",
}

#: Bodies larger than a page shows are not edited in a browser text area either.
EDITABLE_BODY_BYTES = BODY_PAGE_LIMIT


class BulkActionForm(forms.Form):
    """What to do with the ticked letters (or all matching); the reason may come now or at confirm."""

    action = forms.ChoiceField(choices=list(ACTION_LABELS.items()))
    target = forms.CharField(required=False, max_length=500, strip=True, label="Target queue (move)")
    reason = forms.CharField(required=False, max_length=2000, strip=True, label="Reason (for the audit)")
    ticket = forms.CharField(required=False, max_length=200, strip=True, label="Ticket (optional)")
    select_all = forms.BooleanField(required=False)

    def __init__(self, *args, allowed_actions: list[str], **kwargs) -> None:
        kwargs.setdefault("auto_id", "action_%s")  # the filter form on the same page has a "reason"
        super().__init__(*args, **kwargs)
        self.fields["action"].choices = [(a, ACTION_LABELS[a]) for a in allowed_actions]

    def clean(self):
        cleaned = super().clean()
        # The row checkboxes are many inputs of one name, not a declared field.
        cleaned["ids"] = [number for number in map(ascii_whole_number, self.data.getlist("ids")) if number is not None]
        if not cleaned.get("select_all") and not cleaned["ids"]:
            raise forms.ValidationError("Tick some letters, or select all matching.")
        if cleaned.get("action") == Job.Kind.MOVE and not cleaned.get("target"):
            self.add_error("target", "A move needs a target queue.")
        if cleaned.get("action") != Job.Kind.MOVE:
            cleaned["target"] = ""
        return cleaned


class ShovelForm(forms.Form):
    """Move a whole dead place on the broker (the place page's shovel form)."""

    target = forms.CharField(max_length=500, strip=True, label="Target queue (must exist)")
    reason = forms.CharField(max_length=2000, strip=True, label="Reason (for the audit)")
    ticket = forms.CharField(required=False, max_length=200, strip=True, label="Ticket (optional)")

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", "shovel_%s")  # the filter form on the same page has a "reason"
        super().__init__(*args, **kwargs)


class ConfirmForm(forms.Form):
    """The confirmation under a preview: the frozen selection (signed), a reason, and for a
    purge the place's name typed in."""

    token = forms.CharField(widget=forms.HiddenInput)
    reason = forms.CharField(max_length=2000, strip=True, label="Reason (for the audit)",
                             error_messages={"required": "A reason is required: it goes into the audit."})
    ticket = forms.CharField(required=False, max_length=200, strip=True, label="Ticket (optional)")
    typed_name = forms.CharField(required=False, max_length=500, strip=False, label="Type the place's name")
    # The pace of a replay or move (console.jobs.kinds.pace).
    rate_limit = IntegerField(required=False, min_value=1, label="Rate limit (letters per second, optional)")
    concurrency = IntegerField(required=False, min_value=1, max_value=MAX_CONCURRENCY, initial=1,
                                     label="Connections publishing at once")
    canary_size = IntegerField(required=False, min_value=1,
                                     label="Canary: replay this many first, then wait (optional)")
    canary_wait_seconds = IntegerField(required=False, min_value=0, max_value=MAX_CANARY_WAIT_SECONDS,
                                             label="Canary wait (seconds, default 30)")
    return_threshold = forms.FloatField(required=False, min_value=0, max_value=100,
                                        label="Pause when more than this % come back (default 5 with a canary)")

    PACE = ("rate_limit", "concurrency", "canary_size", "canary_wait_seconds", "return_threshold")

    def __init__(self, *args, purge_name: str | None = None, publishes: bool = False, **kwargs) -> None:
        kwargs.setdefault("auto_id", "confirm_%s")
        super().__init__(*args, **kwargs)
        if not publishes:
            for name in self.PACE:
                del self.fields[name]
        self.purge_name = purge_name
        if purge_name is None:
            del self.fields["typed_name"]
        else:
            self.fields["typed_name"].label = f"Type {purge_name} to purge"
            self.fields["typed_name"].widget.attrs.update(autocomplete="off", spellcheck="false")
        # The keyboard starts where the operator has something to type.
        first = next((name for name in self.errors if name in self.fields), None) if self.is_bound else None
        if first is None:
            first = "typed_name" if purge_name is not None else ("reason" if not self.initial.get("reason") else None)
        if first:
            self.fields[first].widget.attrs["autofocus"] = True

    def pace(self) -> dict:
        """The pace fields given, as keyword arguments of request_job."""
        given = {name: self.cleaned_data.get(name) for name in self.PACE if name in self.fields}
        if "concurrency" in given:
            given["concurrency"] = given["concurrency"] or 1
        return {name: value for name, value in given.items() if value is not None}

    def clean_typed_name(self) -> str:
        typed = self.cleaned_data.get("typed_name", "")
        if typed != self.purge_name:
            raise forms.ValidationError(
                "The name does not match (it is case-sensitive): nothing was purged."
                if typed else "Type the place's name to confirm the purge."
            )
        return typed


class EditLetterForm(forms.Form):
    """A letter's body and headers as edited in the browser, before its copy is replayed."""

    ENCODINGS = [("text", "Text (UTF-8)"), ("base64", "Base64 (binary)")]

    body = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}))
    body_encoding = forms.ChoiceField(choices=ENCODINGS, label="Body is")
    headers = forms.CharField(
        required=False, strip=False, label="Headers (JSON; bytes, times and decimals tagged $bytes, $ts, $decimal)",
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )
    reason = forms.CharField(max_length=2000, strip=True, label="Reason (for the audit)",
                             error_messages={"required": "A reason is required: it goes into the audit."})
    ticket = forms.CharField(required=False, max_length=200, strip=True, label="Ticket (optional)")

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", "edit_%s")
        super().__init__(*args, **kwargs)

    @classmethod
    def initial_for(cls, body: bytes, headers: dict[str, Any]) -> dict[str, str]:
        """The form's starting values for a letter: text when the body is UTF-8, else base64."""
        try:
            text, encoding = body.decode("utf-8"), "text"
        except UnicodeDecodeError:
            text, encoding = base64.b64encode(body).decode("ascii"), "base64"
        return {"body": text, "body_encoding": encoding,
                "headers": json.dumps(headers or {}, indent=2, ensure_ascii=False)}

    def clean_headers(self) -> dict[str, Any]:
        """The headers as tagged JSON (console.brokers.values), checked by decoding them."""
        raw = self.cleaned_data.get("headers", "").strip() or "{}"
        try:
            parsed = json.loads(raw)
        except ValueError as exc:
            raise forms.ValidationError(f"The headers are not valid JSON: {exc}") from None
        try:
            return tagged_headers(parsed)
        except JobError as exc:
            raise forms.ValidationError(f"Headers: {exc}.") from None

    def clean(self):
        cleaned = super().clean()
        body = self.data.get("body", "")
        if cleaned.get("body_encoding") == "base64":
            try:
                cleaned["body_bytes"] = base64.b64decode("".join(body.split()), validate=True)
            except (ValueError, binascii.Error):
                self.add_error("body", "The body is not valid base64.")
        elif cleaned.get("body_encoding") == "text":
            # Browsers send text areas with CRLF line ends; keep the operator's own line ends.
            cleaned["body_bytes"] = body.replace("\r\n", "\n").encode("utf-8")
        if len(cleaned.get("body_bytes", b"")) > EDITABLE_BODY_BYTES:
            self.add_error("body", f"An edited body may hold at most {EDITABLE_BODY_BYTES // 1024} KiB.")
        return cleaned

