"""Forms of the acting pages: a bulk action's request and confirmation, and edit-and-replay.

They check what a person typed; what it means (states, selections, reasons) is checked again
by the services, which are the only way to change anything.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, ClassVar

from django import forms

from console.decoders.base import Unwritable
from console.decoders.reading import Reading, written
from console.decoders.schemas import NOWHERE, Where
from console.jobs.kinds import JobKind, kind
from console.jobs.kinds.base import Ask
from console.letters import bounded_json, compression
from console.letters.compression import Decoded
from console.services.edit import tagged_headers
from console.services.jobs import JobError
from console.services.parsing import IntegerField, ascii_whole_number
from console.web.display import BODY_PAGE_LIMIT

#: Bodies larger than a page shows are not edited in a browser text area either.
EDITABLE_BODY_BYTES = BODY_PAGE_LIMIT


def form_field(ask: Ask, *, required: bool = False) -> forms.Field:
    """The page's field for one thing a kind asks for. ``required`` where the form serves that
    one kind and the kind requires it (a shovel's target); where a form serves several, the
    chosen kind's needs are checked once it is known (:meth:`BulkActionForm.clean`)."""
    common: dict[str, Any] = {"required": required, "label": ask.label, "initial": ask.initial}
    if ask.type is int:
        return IntegerField(min_value=ask.min_value, max_value=ask.max_value, **common)
    if ask.type is float:
        return forms.FloatField(min_value=ask.min_value, max_value=ask.max_value, **common)
    field = forms.CharField(max_length=ask.max_length, strip=True, **common)
    if ask.queue:  # the page's list of queue names the reader may see
        field.widget.attrs.update({"list": "move-targets", "autocomplete": "off"})
    return field


def asked_values(form: forms.Form, asks: tuple[Ask, ...]) -> dict[str, Any]:
    """What the operator gave of ``asks``, as keyword arguments of request_job."""
    given = {ask.name: form.cleaned_data.get(ask.name) for ask in asks if ask.name in form.fields}
    return {name: value for name, value in given.items() if value not in (None, "")}


class BulkActionForm(forms.Form):
    """What to do with the ticked letters (or all matching); the reason may come now or at confirm.

    Besides the action, it holds a field for each thing the offered kinds ask for with the action
    (a move's target queue); the page shows each only for the actions that ask for it."""

    action = forms.ChoiceField()
    reason = forms.CharField(required=False, max_length=2000, strip=True, label="Reason (for the audit)")
    ticket = forms.CharField(required=False, max_length=200, strip=True, label="Ticket (optional)")
    select_all = forms.BooleanField(required=False)

    def __init__(self, *args, offered: list[JobKind], **kwargs) -> None:
        kwargs.setdefault("auto_id", "action_%s")  # the filter form on the same page has a "reason"
        super().__init__(*args, **kwargs)
        self.kinds = {each.name: each for each in offered}
        self.fields["action"].choices = [  # type: ignore[attr-defined]  # a ChoiceField
            (each.name, each.action_label) for each in offered]
        #: field name -> the actions that ask for it (the page shows the field for those only)
        self.asked_by: dict[str, list[str]] = {}
        for each in offered:
            for ask in each.asks:
                if not ask.at_confirm:
                    self.fields.setdefault(ask.name, form_field(ask))
                    self.asked_by.setdefault(ask.name, []).append(each.name)
        self.order_fields(["action", *self.asked_by, "reason", "ticket", "select_all"])

    def asked_fields(self) -> list[tuple[forms.BoundField, str]]:
        """The fields the actions ask for, each with the actions (space-separated) that ask it."""
        return [(self[name], " ".join(actions)) for name, actions in self.asked_by.items()]

    def clean(self):
        cleaned = super().clean()
        # The row checkboxes are many inputs of one name, not a declared field.
        cleaned["ids"] = [number for number in map(ascii_whole_number, self.data.getlist("ids")) if number is not None]
        if not cleaned.get("select_all") and not cleaned["ids"]:
            raise forms.ValidationError("Tick some letters, or select all matching.")
        chosen = self.kinds.get(cleaned.get("action", ""))
        asks = () if chosen is None else tuple(ask for ask in chosen.asks if not ask.at_confirm)
        for ask in asks:
            if ask.required and cleaned.get(ask.name) in (None, ""):
                self.add_error(ask.name, f"A {chosen.label.lower()} needs {ask.what or ask.label.lower()}.")
        cleaned["asked"] = asked_values(self, asks)
        return cleaned


class KindForm(forms.Form):
    """A request for one kind of job on a whole place: what the kind asks for, a reason and a ticket."""

    kind_name: ClassVar[str]
    reason = forms.CharField(max_length=2000, strip=True, label="Reason (for the audit)")
    ticket = forms.CharField(required=False, max_length=200, strip=True, label="Ticket (optional)")

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", f"{self.kind_name}_%s")  # the filter form on the same page has a "reason"
        super().__init__(*args, **kwargs)
        asks = kind(self.kind_name).asks
        for ask in asks:
            self.fields[ask.name] = form_field(ask, required=ask.required)
        self.order_fields([*(ask.name for ask in asks), "reason", "ticket"])


class ShovelForm(KindForm):
    """Move a whole dead place on the broker (the place page's shovel form)."""

    kind_name = "shovel"


class ConfirmForm(forms.Form):
    """The confirmation under a preview: the frozen selection (signed), a reason, what the kind
    asks for at this step (a replay's pace), and for a kind that cannot be undone (a purge) the
    place's name typed in."""

    token = forms.CharField(widget=forms.HiddenInput)
    reason = forms.CharField(max_length=2000, strip=True, label="Reason (for the audit)",
                             error_messages={"required": "A reason is required: it goes into the audit."})
    ticket = forms.CharField(required=False, max_length=200, strip=True, label="Ticket (optional)")
    typed_name = forms.CharField(required=False, max_length=500, strip=False, label="Type the place's name")

    def __init__(self, *args, job_kind: JobKind, place_name: str, **kwargs) -> None:
        kwargs.setdefault("auto_id", "confirm_%s")
        super().__init__(*args, **kwargs)
        self.asks = tuple(ask for ask in job_kind.asks if ask.at_confirm)
        for ask in self.asks:
            self.fields[ask.name] = form_field(ask)
        self.name_to_type = place_name if job_kind.cannot_be_undone else None
        if self.name_to_type is None:
            del self.fields["typed_name"]
        else:
            self.fields["typed_name"].label = f"Type {self.name_to_type} to {job_kind.action_label.lower()}"
            self.fields["typed_name"].widget.attrs.update(autocomplete="off", spellcheck="false")
        # The keyboard starts where the operator has something to type.
        first = next((name for name in self.errors if name in self.fields), None) if self.is_bound else None
        if first is None:
            first = ("typed_name" if self.name_to_type is not None
                     else "reason" if not self.initial.get("reason") else None)
        if first:
            self.fields[first].widget.attrs["autofocus"] = True

    def asked(self) -> dict[str, Any]:
        """What the operator gave at this step, as keyword arguments of request_job."""
        return asked_values(self, self.asks)

    def clean_typed_name(self) -> str:
        typed = self.cleaned_data.get("typed_name", "")
        if typed != self.name_to_type:
            raise forms.ValidationError(
                "The name does not match (it is case-sensitive): nothing was purged."
                if typed else "Type the place's name to confirm the purge."
            )
        return typed


def pretty_json(text: str) -> str | None:
    """``text`` laid out for reading and editing (indented) when it is a JSON object or array;
    None for any other text, and for JSON too deep or too large to lay out (bounded_json: a
    hostile body nested thousands deep must not take the letter page down)."""
    try:
        value = bounded_json.loads(text)
    except (ValueError, RecursionError):
        return None
    return json.dumps(value, indent=2, ensure_ascii=False) if isinstance(value, (dict, list)) else None


def shown_for_editing(body: bytes) -> tuple[str, str]:
    """A body as the edit box shows it, and its encoding: JSON pretty-printed, other UTF-8
    text as it is, anything else in base64."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return base64.b64encode(body).decode("ascii"), "base64"
    return pretty_json(text) or text, "text"


class EditLetterForm(forms.Form):
    """A letter's body and headers as edited in the browser, before its copy is replayed.

    ``original`` is the letter's body, ``compressed`` how it decoded when the letter says it is
    compressed (console.letters.compression). The box shows the body as people read it:
    decoded, and a JSON body pretty-printed. What is sent is the letter's own bytes while the
    box still holds what it showed; an edit made in the JSON layout compact (the indentation
    was the box's, not the letter's), any other text as typed; and an edited compressed body is
    compressed again, with the letter's own encoding, which its copy keeps.
    """

    ENCODINGS = [("text", "Text (UTF-8)"), ("base64", "Base64 (binary)")]

    body = forms.CharField(required=False, strip=False,
                           widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}))
    body_encoding = forms.ChoiceField(choices=ENCODINGS, label="Body is")
    headers = forms.CharField(
        required=False, strip=False, label="Headers (JSON; bytes, times and decimals tagged $bytes, $ts, $decimal)",
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )
    reason = forms.CharField(max_length=2000, strip=True, label="Reason (for the audit)",
                             error_messages={"required": "A reason is required: it goes into the audit."})
    ticket = forms.CharField(required=False, max_length=200, strip=True, label="Ticket (optional)")

    def __init__(self, *args, original: bytes | None = None, compressed: Decoded | None = None,
                 reading: Reading | None = None, said: tuple[Any, Any, Where] = (None, None, NOWHERE),
                 **kwargs) -> None:
        kwargs.setdefault("auto_id", "edit_%s")
        super().__init__(*args, **kwargs)
        self.original = original
        self.compressed = compressed if compressed is not None and compressed.ok else None
        # A body in a format the console writes back (console.decoders.reading.writes): edited
        # as its value's JSON, and sent written in its format again; ``said``: the letter's
        # properties, headers and where it is, which say its format and message type.
        self.reading, self.said = reading, said
        if reading is not None:
            encoding: Any = self.fields["body_encoding"]
            encoding.choices = [("decoded", f"{reading.label}, edited as JSON"), *self.ENCODINGS]

    @property
    def readable(self) -> bytes | None:
        """The letter's body as the box shows it: decoded when compressed."""
        return self.compressed.body if self.compressed is not None else self.original

    @classmethod
    def initial_for(cls, body: bytes, headers: dict[str, Any], compressed: Decoded | None = None,
                    reading: Reading | None = None) -> dict[str, str]:
        """The form's starting values for a letter (shown_for_editing), its body decoded when it
        is compressed and decodes, and read as JSON when it is in a format written back."""
        readable = compressed.body if compressed is not None and compressed.body is not None else body
        text, encoding = shown_for_editing(readable)
        if reading is not None and reading.text is not None:
            text, encoding = reading.text.decode("utf-8"), "decoded"
        return {"body": text, "body_encoding": encoding,
                "headers": json.dumps(headers or {}, indent=2, ensure_ascii=False)}

    def clean_headers(self) -> dict[str, Any]:
        """The headers as tagged JSON (console.letters.values), checked by decoding them."""
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
                cleaned["body_bytes"] = self._stored(base64.b64decode("".join(body.split()), validate=True))
            except (ValueError, binascii.Error):
                self.add_error("body", "The body is not valid base64.")
        elif cleaned.get("body_encoding") == "decoded" and self.reading is not None:
            cleaned["body_bytes"] = self._written(body.replace("\r\n", "\n"))
        elif cleaned.get("body_encoding") == "text":
            # Browsers send text areas with CRLF line ends; keep the operator's own line ends.
            cleaned["body_bytes"] = self._sent(body.replace("\r\n", "\n"))
        if len(cleaned.get("body_bytes", b"")) > EDITABLE_BODY_BYTES:
            self.add_error("body", f"An edited body may hold at most {EDITABLE_BODY_BYTES // 1024} KiB.")
        return cleaned

    def _written(self, text: str) -> bytes:
        """The body the JSON of a read body sends: the letter's own bytes while it is what the
        box showed, else the value written in the letter's format (console.decoders.reading)."""
        shown = self.reading.text if self.reading is not None else None
        if self.original is None or shown is None:
            return text.encode("utf-8")
        if text == shown.decode("utf-8"):
            return self.original
        try:
            value = bounded_json.loads(text)
        except (ValueError, RecursionError) as exc:
            self.add_error("body", f"The body is not valid JSON: {exc}")
            return b""
        try:
            return written(value, self.original, *self.said)
        except Unwritable as exc:
            self.add_error("body", f"{exc}.")
            return b""

    def _sent(self, text: str) -> bytes:
        """The body a text in the box sends (see the class's docstring)."""
        readable = self.readable
        if readable is not None:
            shown, encoding = shown_for_editing(readable)
            if encoding == "text" and text == shown:
                return self._stored(readable)
            if encoding == "text" and shown.encode("utf-8") != readable and text == pretty_json(text):
                return self._stored(json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
                                    .encode("utf-8"))
        return self._stored(text.encode("utf-8"))

    def _stored(self, body: bytes) -> bytes:
        """What is sent for a body as the box reads it: the letter's own bytes when it is the
        letter's body, else the body, compressed again when the letter's was."""
        if self.original is not None and body == self.readable:
            return self.original
        return body if self.compressed is None else compression.encode(body, self.compressed)
