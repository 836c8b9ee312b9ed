"""Letters over the REST API: what a letter's serializer masks beyond the masked base.

Every field of an answer is masked by console.access.masking unless declared safe; a letter
needs more than a field-by-field mask: a body that is not text cannot be masked, so it is
hidden; a preview is made from the masked head of the body (a cut-off head could split what a
rule matches); headers and properties hide the values of the headers named by rules.
"""

from __future__ import annotations

import json

from console.access.masking import MaskedSerializerMixin
from console.access.redactor import PREVIEW_SOURCE_BYTES, Redactor, masked_preview

#: Fields RedactedLetterMixin masks itself (the base leaves them to it); ``audit`` comes from
#: AuditEventSerializer, masked with the same context.
LETTER_CONTENT = ("preview", "body", "decoded", "headers", "properties", "audit")


class RedactedLetterMixin(MaskedSerializerMixin):
    """Masks a letter's preview, body, headers, properties, envelope and audit trail for viewers
    (and, through the base, every other field not declared safe)."""

    safe_fields = ("fingerprint", "replay_id")

    def mask(self, data, letter, redactor: Redactor, done: tuple[str, ...] = ()):
        if "preview" in data:
            head = getattr(letter, "preview_head", None)
            if head is None:
                head = letter.body_bytes if "body" in data else _full_head(letter)
            data["preview"] = masked_preview(redactor, bytes(head), letter.body_size)
        if "body" in data:
            masked = redactor.body(letter.body_bytes)
            data["body"] = ({"encoding": "hidden"} if masked is None
                            else {"encoding": "text", "text": masked.decode("utf-8")})
        if data.get("decoded") and data["decoded"].get("value") is not None:
            data["decoded"] = _masked_reading(data["decoded"], redactor)
        for name in ("headers", "properties"):
            if name in data:
                data[name] = redactor.value(data[name])
        return super().mask(data, letter, redactor, done=(*done, *LETTER_CONTENT))


def _masked_reading(decoded: dict, redactor: Redactor) -> dict:
    """A body read in its format (console.decoders), masked as the page masks it: its JSON text
    (or XML) through the body's mask, then read back."""
    value = decoded["value"]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    masked = redactor.body(text.encode("utf-8"))
    if masked is None:
        return {**decoded, "value": None, "error": "hidden: your role sees bodies masked"}
    shown = masked.decode("utf-8")
    try:
        return {**decoded, "value": shown if isinstance(value, str) else json.loads(shown)}
    except ValueError:
        return {**decoded, "value": shown}


def _full_head(letter) -> bytes:
    from django.db.models import BinaryField
    from django.db.models.functions import Substr

    from console.models import DeadLetter

    head = (DeadLetter.objects.filter(pk=letter.pk)
            .annotate(head=Substr("body", 1, PREVIEW_SOURCE_BYTES, output_field=BinaryField()))
            .values_list("head", flat=True).first())
    return bytes(head or b"")
