"""Who sees letter content masked, and which fields of what carry content (the masking itself is
console.access.redactor's).

Who sees what: viewers see bodies, headers, previews and audit details masked; operators and
admins (the ``see_unredacted`` permission) see them as they are on the pages and the API, since
they triage them; exports, notifications and answers for no known reader are masked for
everyone. The Parquet lake of console.pipeline is not masked (it is an archive for the
operators of the console, not an export).

What is masked: bodies, headers, properties, previews, the envelope's exception texts and
details (letter page, API, failure groups live and from history), audit events' typed texts
and details, jobs' typed texts and logs (job pages, approvals, API), origins' exception texts.
Filters on masked content are confirmed against it (console.services.selection.visible_matches),
so a search never finds a letter by what its mask hides.
"""

from __future__ import annotations

from collections.abc import Iterable

from console.access.redactor import PREVIEW_SOURCE_BYTES, Redactor, masked_preview
from console.access.roles import SEE_UNREDACTED, has
from console.decoders import reading
from console.letters import compression
from console.letters.values import body_preview

#: Envelope fields that come from the message (frameworks' exception headers, x-death...),
#: with their names in a failure group's history row (sample message, consumers, hosts).
ENVELOPE_FIELDS = ("exception_type", "exception_message", "exception_stack", "envelope_details",
                   "sample_message", "consumers", "hosts")
#: Audit event fields a person typed or an action wrote from content.
AUDIT_FIELDS = ("reason", "ticket", "target", "outcome", "details")
#: Origin fields copied from its letters' exception types (its breaker's streak and why it opened).
ORIGIN_FIELDS = ("streak_exception", "breaker_reason")
#: Job fields a person typed or a run wrote.
JOB_FIELDS = ("reason", "ticket", "target", "params", "selection", "log", "error", "pause_reason")


def for_everyone() -> Redactor:
    """The redactor of every enabled rule: what anyone may be shown (exports, notifications,
    metrics labels, an answer for no known reader)."""
    from console.models import RedactionRule

    return Redactor(RedactionRule.objects.filter(enabled=True).values_list("kind", "pattern"))


def for_user(user) -> Redactor | None:
    """The redactor for what ``user`` is shown, or None when they may see content unmasked."""
    return None if has(user, SEE_UNREDACTED) else for_everyone()


def mask_previews(user, letters: list) -> None:
    """Replace the ``preview`` of listed letters by one made from their bodies as ``user`` may
    read them (one query for the whole list): a compressed body's decoded head
    (console.letters.compression) for everyone, and every body masked for a user who may not
    see content unmasked. The letters carry their properties and headers (not their bodies)."""
    redactor = for_user(user)
    encodings = {letter.pk: compression.encoding_of(letter.properties, letter.headers) for letter in letters}
    redone = [letter for letter in letters if redactor is not None or encodings[letter.pk]]
    if not redone:
        return
    from django.db.models import BinaryField
    from django.db.models.functions import Substr

    from console.models import DeadLetter

    heads = dict(DeadLetter.objects.filter(id__in=[letter.pk for letter in redone])
                 .annotate(head=Substr("body", 1, PREVIEW_SOURCE_BYTES, output_field=BinaryField()))
                 .values_list("id", "head"))
    for letter in redone:
        head, size = compression.readable_head(bytes(heads.get(letter.pk) or b""), letter.body_size,
                                               encodings[letter.pk], PREVIEW_SOURCE_BYTES)
        letter.preview = body_preview(head, size) if redactor is None else masked_preview(redactor, head, size)


def mask_events(user, events: Iterable) -> list:
    """Audit events with their details masked for a user who may not see content unmasked."""
    events = list(events)
    redactor = for_user(user)
    if redactor is not None:
        _mask_fields(events, AUDIT_FIELDS, redactor)
    return events


def _mask_fields(items: Iterable, names: tuple[str, ...], redactor: Redactor) -> None:
    """Mask the named fields of each item in place, whether it is a dict or an object."""
    for item in items:
        if isinstance(item, dict):
            item.update({n: redactor.value(item[n]) for n in names if n in item})
        else:
            for name in names:
                if hasattr(item, name):
                    setattr(item, name, redactor.value(getattr(item, name)))


def mask_envelopes(user, items: Iterable) -> None:
    """Mask in place the envelope texts (exception type, message, stack, details, a group's
    sample message) of letters, failure groups or their rows, for a user who may not see content
    unmasked. The one door for envelopes on the pages (the API's serializers mask every text)."""
    redactor = for_user(user)
    if redactor is not None:
        _mask_fields(items, ENVELOPE_FIELDS, redactor)


def mask_origins(user, origins: Iterable) -> None:
    """Mask in place an origin's streak exception and breaker reason (exception types, as a
    letter's envelope), for a user who may not see content unmasked: pages and API alike."""
    redactor = for_user(user)
    if redactor is not None:
        _mask_fields(origins, ORIGIN_FIELDS, redactor)


def mask_jobs(user, jobs: Iterable) -> None:
    """Mask in place the typed texts and log of jobs, for a user who may not see content unmasked."""
    redactor = for_user(user)
    if redactor is not None:
        _mask_fields(jobs, JOB_FIELDS, redactor)


class ShownContent:
    """A letter's headers, properties, body and envelope texts as a user may see them (``body``
    None: hidden; ``envelope``: the ENVELOPE_FIELDS a letter has, by name). A compressed body
    is decoded first (``compression`` says how, None for a body sent as it is), and a body in a
    format of console.decoders read (``reading``), so a viewer's mask applies to the text they
    read."""

    def __init__(self, user, letter) -> None:
        redactor = for_user(user)
        self.masked = redactor is not None
        self.compression = compression.read(letter.body_bytes, letter.properties, letter.headers)
        body = letter.body_bytes
        if self.compression is not None and self.compression.body is not None:
            body = self.compression.body
        # A body in a format (console.decoders) is shown read, as JSON: masked as a JSON body is.
        self.reading = reading.read(body, letter.properties, letter.headers, reading.where_of(letter))
        if self.reading is not None and self.reading.text is not None:
            body = self.reading.text
        envelope = {name: getattr(letter, name) for name in ENVELOPE_FIELDS if hasattr(letter, name)}
        if redactor is None:
            self.headers, self.properties, self.body = letter.headers, letter.properties, body
            self.envelope = envelope
        else:
            self.headers = redactor.value(letter.headers)
            self.properties = redactor.value(letter.properties)
            self.body = redactor.body(body)
            self.envelope = {name: redactor.value(value) for name, value in envelope.items()}
