"""A letter's trace as a reader may see it: its ids and the link to the tracing UI.

The trace id is read from headers (or a Dramatiq body) that a redaction rule may mask for a
reader (console.access.redaction_policy). Rather than a list of which rule could hide which
header, the trace a reader is shown is the one that can be read from what they are shown: the
letter's trace headers (and, for a trace read from a body, its body) masked for them, read
again (console.tracing.context), must give the stored ids. A masked header name, a masked
value or a value a regular expression changed gives none, so the id is neither shown, nor
linked, nor found by the ``trace_id`` filter (console.services.selection confirms each
candidate with :func:`may_see`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings

from console.access.redactor import Redactor
from console.models import DeadLetter
from console.tracing.context import HEADER_NAMES, read_trace_context, valid_span_id, valid_trace_id
from console.tracing.links import trace_url


@dataclass(frozen=True)
class ShownTrace:
    """What a page or the API shows of a letter's trace: ids, and the link ("" without
    DLO_TRACE_URL)."""

    trace_id: str
    span_id: str
    url: str

    def as_dict(self) -> dict[str, str]:
        return {"trace_id": self.trace_id, "span_id": self.span_id, "url": self.url}


def _trace_headers(table: Any) -> dict[str, Any]:
    """The entries of a header table that may carry trace context (any case)."""
    if not isinstance(table, Mapping):
        return {}
    return {name: value for name, value in table.items()
            if isinstance(name, str) and name.lower() in HEADER_NAMES}


def _shown(trace_id: str, span_id: str) -> ShownTrace:
    span = span_id if valid_span_id(span_id) else ""
    return ShownTrace(trace_id, span, trace_url(settings.DLO_TRACE_URL, trace_id, span))


def _seen(redactor: Redactor, trace_id: str, span_id: str, headers: Any, properties: Any,
          body: Callable[[], bytes]) -> bool:
    """Whether ``trace_id`` and ``span_id`` are read again from the content as ``redactor``
    masks it; ``body`` gives the body, read only for a trace that came from one."""
    headers, properties = _trace_headers(headers), _trace_headers(properties)
    if read_trace_context(headers, properties) is not None:
        seen = read_trace_context(redactor.value(headers), redactor.value(properties))
    else:  # read from the body (Dramatiq): masked as the reader reads the body
        masked = redactor.body(body())
        seen = None if masked is None else read_trace_context(None, None, masked)
    return seen is not None and (seen.trace_id, seen.span_id) == (trace_id, span_id)


def may_see(redactor: Redactor | None, letter: DeadLetter) -> bool:
    """Whether the reader of ``redactor`` (None: sees content unmasked) is shown the letter's
    trace id: it has one, and it can be read from what the reader is shown of the letter."""
    if not valid_trace_id(letter.trace_id):
        return False
    return redactor is None or _seen(redactor, letter.trace_id, letter.span_id, letter.headers, letter.properties,
                                     lambda: letter.body_bytes)


def shown_trace(redactor: Redactor | None, letter: DeadLetter) -> ShownTrace | None:
    """The letter's trace as the reader of ``redactor`` sees it, or None."""
    return _shown(letter.trace_id, letter.span_id) if may_see(redactor, letter) else None


def shown_traces(redactor: Redactor | None, letters: Iterable[DeadLetter]) -> dict[int, ShownTrace]:
    """Each listed letter's trace as the reader sees it, by letter id (absent: none shown), in
    one query for a masked reader whatever the letters carry loaded (a list defers headers and
    bodies), and one more for the few whose trace came from a body."""
    traced = {letter.pk: (letter.trace_id, letter.span_id) for letter in letters if valid_trace_id(letter.trace_id)}
    if redactor is None or not traced:
        return {pk: _shown(*ids) for pk, ids in traced.items()}
    content = {pk: (headers, properties) for pk, headers, properties in
               DeadLetter.objects.filter(id__in=list(traced)).values_list("id", "headers", "properties")}
    from_body = [pk for pk, (headers, properties) in content.items()
                 if read_trace_context(_trace_headers(headers), _trace_headers(properties)) is None]
    bodies: defaultdict[int, bytes] = defaultdict(bytes)  # a letter gone meanwhile: no body
    if from_body:
        bodies.update((pk, bytes(body or b"")) for pk, body in
                      DeadLetter.objects.filter(id__in=from_body).values_list("id", "body"))
    return {pk: _shown(*traced[pk]) for pk, (headers, properties) in content.items()
            if _seen(redactor, *traced[pk], headers, properties, partial(bodies.__getitem__, pk))}
