"""The trace context a replayed letter carries (``DLO_REPLAY_TRACE``), so that a consumer's
retry is a trace of its own that links back to the failure rather than a continuation of it.

- ``link`` (the default): the letter's trace context headers (``HEADER_NAMES`` of
  console.tracing.context, plus B3's parent span id) are replaced by a fresh ``traceparent``
  (and the same fresh context in the letter's own B3 or Jaeger format, when it carried one),
  and the failed trace's context is kept in ``x-dlo-failed-traceparent`` (W3C form, whatever
  format it came in), which a consumer may turn into a span link. With the console's own
  telemetry on (console.tracing.telemetry), the fresh context is the replay batch's span,
  which links to each letter's failed trace; with it off, the ids are random and no span of
  the console records them.
- ``keep``: the letter is published with the context it died with, so the retry continues the
  failed trace.
- ``none``: every trace context header is taken out (and ``x-dlo-failed-traceparent`` too).

Plain Python, no Django and no OpenTelemetry SDK: it runs for every letter a replay publishes,
in a replay's publisher process too (console.brokers.publish_process). A letter that carries no
trace context costs a pass over its header names, and is published without one unless the
console's telemetry gives its batch span; the fresh ids come from ``os.urandom``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from os import urandom
from typing import Any

from console.env import ConfigError, env_str
from console.tracing.context import HEADER_NAMES, TraceContext, read_trace_context

#: The header that keeps the failed trace's context on a replayed letter (``link`` mode).
FAILED_CONTEXT_HEADER = "x-dlo-failed-traceparent"
MODES = ("link", "keep", "none")
LINK, KEEP, NONE = MODES

#: Every header name (lowercase) that a replay in ``link`` or ``none`` mode takes out.
_CONTEXT_NAMES = frozenset((*HEADER_NAMES, "x-b3-parentspanid"))
_LONGEST = max(map(len, _CONTEXT_NAMES))
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16
#: A W3C traceparent as OpenTelemetry writes it: the common case, read here without the full
#: reading of every format (console.tracing.context), which costs several microseconds more.
_PLAIN_TRACEPARENT = re.compile(r"([0-9a-e][0-9a-f])-((?!0{32})[0-9a-f]{32})-((?!0{16})[0-9a-f]{16})-([0-9a-f]{2})")


@functools.cache
def replay_mode() -> str:
    """``DLO_REPLAY_TRACE``, read once per process (a publisher process inherits the variable)."""
    value = (env_str("DLO_REPLAY_TRACE", LINK) or LINK).strip().lower()
    if value not in MODES:
        raise ConfigError(f"DLO_REPLAY_TRACE={value!r} is none of {', '.join(MODES)}")
    return value


def new_traceparent() -> str:
    """A W3C traceparent with fresh random ids, sampled (an operator replaying wants the retry
    seen). One call of os.urandom for both ids: the cheapest way Python has to 24 random bytes."""
    ids = urandom(24).hex()
    if ids.startswith(_ZERO_TRACE) or ids.endswith(_ZERO_SPAN):  # W3C forbids an all-zero id
        return new_traceparent()
    return f"00-{ids[:32]}-{ids[32:]}-01"


def replay_headers(headers: dict[str, Any], traceparent: str = "") -> dict[str, Any]:
    """``headers`` (a dict of the letter's own, changed in place and returned) as a replay
    publishes them, by ``DLO_REPLAY_TRACE``. ``traceparent`` is the console's span for this
    letter when its telemetry is on; empty, a random one is made for a letter that carried a
    context, and a letter that carried none is left without one."""
    mode = replay_mode()
    if mode == KEEP:
        return headers
    carried = context_headers(headers)
    if mode == NONE:
        for name in carried:
            del headers[name]
        headers.pop(FAILED_CONTEXT_HEADER, None)
        return headers
    if not carried and not traceparent:
        # Nothing to link to and no span of the console's to be its parent: the letter goes as
        # it came (on some brokers its headers are its payload: a Redis stream entry's fields).
        return headers
    failed = failed_context(headers, carried) if carried else None
    for name in carried:
        del headers[name]
    fresh = traceparent or new_traceparent()
    headers["traceparent"] = fresh
    if failed is not None:
        headers[FAILED_CONTEXT_HEADER], form = failed
        if form != "w3c":
            headers.update(_in_format(form, fresh, {name.lower(): name for name in carried}))
    return headers


def context_headers(headers: Mapping[str, Any]) -> list[str]:
    """The names of the trace context headers among ``headers``, as spelled there."""
    return [name for name in headers if type(name) is str and len(name) <= _LONGEST and name.lower() in _CONTEXT_NAMES]


def failed_context(headers: Mapping[str, Any], carried: list[str]) -> tuple[str, str] | None:
    """The context of the trace a letter failed in, in W3C form, and the format it carried it
    in, from its ``carried`` context headers (:func:`context_headers`); None if none parses."""
    if carried == ["traceparent"] or carried == ["traceparent", "tracestate"]:
        value = headers["traceparent"]
        plain = _PLAIN_TRACEPARENT.fullmatch(value) if type(value) is str else None
        if plain is not None:
            return f"00-{plain[2]}-{plain[3]}-{'01' if int(plain[4], 16) & 1 else '00'}", "w3c"
    context = read_trace_context({name: headers[name] for name in carried})
    return (as_traceparent(context), context.format) if context is not None else None


def as_traceparent(context: TraceContext) -> str:
    """A letter's trace context in W3C form (sampled unless the letter said it was not)."""
    return f"00-{context.trace_id}-{context.span_id}-{'00' if context.sampled is False else '01'}"


def parse_traceparent(value: str) -> tuple[int, int, bool] | None:
    """(trace id, span id, sampled) of a traceparent this module wrote (or a consumer kept), or
    None for one that does not parse or names no trace."""
    parts = value.split("-")
    if len(parts) != 4 or len(parts[1]) != 32 or len(parts[2]) != 16:
        return None
    try:
        trace_id, span_id, flags = int(parts[1], 16), int(parts[2], 16), int(parts[3], 16)
    except ValueError:
        return None
    return (trace_id, span_id, bool(flags & 1)) if trace_id and span_id else None


def _in_format(form: str, traceparent: str, names: dict[str, str]) -> dict[str, str]:
    """The fresh context also in the format the letter carried its own, for a consumer that
    reads only that one (its W3C ``traceparent`` is always written), under the header names as
    the letter spelled them (a dict carrier's lookup is case-sensitive)."""
    _, trace_id, span_id, flags = traceparent.split("-")
    sampled = "1" if int(flags, 16) & 1 else "0"
    if form == "b3":
        values = {"b3": f"{trace_id}-{span_id}-{sampled}"}
    elif form == "b3multi":
        values = {"x-b3-traceid": trace_id, "x-b3-spanid": span_id, "x-b3-sampled": sampled}
    elif form == "jaeger":
        values = {"uber-trace-id": f"{trace_id}:{span_id}:0:{sampled}"}
    else:
        values = {}
    return {names.get(name, name): value for name, value in values.items()}
