"""Edit and replay one letter: the operator fixes its body or headers, and a copy is replayed.

Semantics (kept simple so the audit reads plainly):

* The original is never changed in content: custody keeps exactly what the broker gave us.
* A **copy** is made as a new letter in the same dead place, ``held``, with the edited body and
  headers and the original's envelope; its ``parent`` is the original and its
  ``envelope_details["edited_from"]`` names it, so lineage tells an edited copy from a letter
  that came back dead after a replay.
* The original becomes ``failed`` (given up *as it was*: it must not be replayed again by a
  later "replay all matching", which would send the broken content twice). It is kept for the
  retention period like any failed letter.
* The job (kind ``edit_replay``, console.jobs.kinds.edit_replay) replays the copy alone, so it
  runs, is confirmed and is counted like any replay; if the broker refuses it, the copy stays ``held`` and can be
  replayed or edited again.
* One audit event ``edit_replay`` records the change with its diff: headers added, removed and
  changed, the body's size and SHA-256 before and after, and a unified diff of text bodies
  (capped). It is written in the same transaction as the copy, the original's new state and
  the job.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

from django.utils import timezone

from console.access.actors import Actor
from console.decoders.reading import readable, where_of
from console.letters.values import display, escape_nul, from_json, to_json
from console.models import DeadLetter, Job, LetterState
from console.services import audit
from console.services.flights import shown_state
from console.services.jobs import JobError
from console.services.search_rows import write_decoded_texts
from console.tracing.context import read_trace_context

#: States whose letters may be edited and replayed.
EDITABLE_STATES = (LetterState.HELD, LetterState.FAILED)
#: The unified diff of text bodies kept in the audit, at most this many characters.
DIFF_CHARS = 20_000
#: Bodies larger than this get hashes but no text diff (difflib is slow on large inputs).
DIFF_INPUT_BYTES = 256 * 1024
#: Header values shown in the audit's diff, at most this many characters each.
VALUE_CHARS = 500

#: Envelope fields the copy takes over from the original unchanged.
_ENVELOPE_FIELDS = (
    "place_id", "broker_id", "message_id", "origin_address", "origin_queue", "routing_key", "reason",
    "death_count", "first_failed_at", "last_failed_at", "exception_type", "exception_message",
    "exception_stack", "fingerprint", "properties",
)


def tagged_headers(value: Any) -> dict[str, Any]:
    """Headers given as tagged JSON (console.letters.values), checked by decoding them and
    returned in their canonical form; JobError says what is wrong."""
    if not isinstance(value, dict):
        raise JobError('headers must be a JSON object: {"name": value, ...}')
    try:
        canonical: dict[str, Any] = to_json(from_json(value))
    except (ValueError, TypeError) as exc:  # binascii.Error is a ValueError
        raise JobError(f"a tagged header value does not decode: {exc}") from None
    return canonical


def make_edited_copy(letter: DeadLetter, *, body: bytes, headers: dict[str, Any]) -> tuple[DeadLetter, DeadLetter]:
    """The original, locked and now ``failed``, and its edited copy, ``held`` in the same place;
    ``headers`` are tagged JSON (console.letters.values). Runs inside the transaction of the
    edit-and-replay job's request (console.jobs.kinds.edit_replay), which replays the copy.

    Raises JobError when the letter cannot be edited (purged, already replaying or replayed,
    origin unknown).
    """
    original = DeadLetter.objects.select_for_update().select_related("place__broker").get(pk=letter.pk)
    state = shown_state(original)  # after the lock: a replay that took it has its flight written
    if state not in EDITABLE_STATES:
        raise JobError(f"letter {original.pk} is {state}: only held or failed letters can be edited")
    if not original.origin_queue:
        raise JobError(f"letter {original.pk} has no known origin to replay its copy to")
    if not isinstance(headers, dict):
        raise JobError("headers must be a JSON object")
    trace = read_trace_context(headers, original.properties, body)  # the edit may have changed it
    copy = DeadLetter.objects.create(
        **{field: getattr(original, field) for field in _ENVELOPE_FIELDS},
        trace_id=trace.trace_id if trace else "", span_id=trace.span_id if trace else "",
        custody_key=_content_key(original.message_id, headers, body),
        envelope_details={**(original.envelope_details or {}), "edited_from": original.pk},
        headers=headers,
        body=body,
        body_size=len(body),
        parent=original,
    )
    write_decoded_texts(DeadLetter.objects.filter(pk=copy.pk))  # a compressed copy is searched decoded
    original.state = LetterState.FAILED
    original.state_changed_at = timezone.now()
    original.save(update_fields=["state", "state_changed_at"])
    return original, copy


def record_edit(job: Job, original: DeadLetter, copy: DeadLetter, *, before_body: bytes, actor: Actor) -> None:
    """The ``edit_replay`` audit event with the edit's diff, in the request's transaction."""
    audit.record(
        "edit_replay", actor=actor, reason=job.reason, ticket=job.ticket, job=job, place=original.place,
        target=original.origin_queue, letter_ids=[original.pk, copy.pk], outcome="copy queued",
        details={"original": original.pk, "copy": copy.pk,
                 **edit_diff(before_body, copy.body_bytes, original.headers or {}, copy.headers,
                             read=(readable(before_body, original.properties, original.headers, where_of(original)),
                                   readable(copy.body_bytes, copy.properties, copy.headers, where_of(copy))))},
    )


def edit_diff(before_body: bytes, after_body: bytes, before_headers: dict[str, Any],
              after_headers: dict[str, Any], *, read: tuple[bytes, bytes] | None = None) -> dict[str, Any]:
    """What an edit changed, small enough for an audit row; ``read``: the two bodies as people
    read them (decoded when compressed, a body format's value as JSON: console.decoders.reading),
    which the text diff compares."""
    added = sorted(set(after_headers) - set(before_headers))
    removed = sorted(set(before_headers) - set(after_headers))
    changed = sorted(k for k in set(before_headers) & set(after_headers) if before_headers[k] != after_headers[k])
    return {
        "headers": {
            "added": {k: _short(after_headers[k]) for k in added},
            "removed": {k: _short(before_headers[k]) for k in removed},
            "changed": {k: {"before": _short(before_headers[k]), "after": _short(after_headers[k])} for k in changed},
        },
        "body": {
            "before": {"bytes": len(before_body), "sha256": hashlib.sha256(before_body).hexdigest()},
            "after": {"bytes": len(after_body), "sha256": hashlib.sha256(after_body).hexdigest()},
            "changed": before_body != after_body,
            "diff": _text_diff(*(read or (before_body, after_body))),
        },
    }


def _short(value: Any) -> str:
    shown = escape_nul(display(value))
    return shown if len(shown) <= VALUE_CHARS else shown[:VALUE_CHARS] + "…"


def _text_diff(before: bytes, after: bytes) -> str:
    """A unified diff when both bodies are text, capped at DIFF_CHARS; "" otherwise."""
    if before == after or max(len(before), len(after)) > DIFF_INPUT_BYTES:
        return ""
    try:
        old, new = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), "before", "after", lineterm="", n=2)
    text = escape_nul("\n".join(lines))
    return text if len(text) <= DIFF_CHARS else text[:DIFF_CHARS] + "\n… (diff cut)"


def _content_key(message_id: str, headers: dict[str, Any], body: bytes) -> str:
    digest = hashlib.sha256(b"edited\0")
    digest.update(message_id.encode("utf-8", "surrogatepass"))
    digest.update(json.dumps(headers, sort_keys=True).encode("utf-8", "surrogatepass"))
    digest.update(body)
    return digest.hexdigest()
