"""Masking letter content with the redaction rules (console.models.RedactionRule).

Who sees what: viewers see bodies, headers, previews and audit details masked; operators and
admins (the ``see_unredacted`` permission) see them as they are on the pages and the API, since
they triage them; exports are masked for everyone. The Parquet lake of console.pipeline is
not masked (it is an archive for the operators of the console, not an export).

Rules: JSON paths apply to bodies that parse as JSON (and to JSON held in header values and
audit details; in text that is not whole JSON, such as an edit's body diff, to every value of
the field the path ends with), header names to headers and properties (and to keys of audit
details), regular expressions to every text that is left, after decoding: bytes, numbers and
JSON escapes are masked as the text a reader is shown. A body that is not text (binary) cannot
be masked reliably, so a viewer does not see it at all.

What is masked: bodies, headers, properties, previews, the envelope's exception texts and
details (letter page, API, failure groups live and from history), audit events' typed texts
and details, jobs' typed texts and logs (job pages, approvals, API). Filters on masked content are confirmed
against it (console.services.selection.visible_matches), so a search never finds a letter by
what its mask hides.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import re
from collections.abc import Iterable
from typing import Any

from console.access.roles import SEE_UNREDACTED, has
from console.brokers import bounded_json
from console.brokers.values import body_preview
from console.refusals import Refusal

MASK = "***"
#: A viewer's preview is made from at most this much of the masked body.
PREVIEW_SOURCE_BYTES = 64 * 1024

_STEP = re.compile(r"\.\.(?P<descend>[\w-]+|\*)|\.(?P<child>[\w-]+|\*)|\[(?P<index>\d+|\*|'[^']*'|\"[^\"]*\")\]")


class RuleError(Refusal):
    """A redaction rule's pattern cannot be used."""


def parse_json_path(path: str) -> list[tuple[str, Any]]:
    """Steps of a JSON path: ``$``, ``.name``, ``..name``, ``.*``, ``[n]``, ``[*]``, ``['name']``."""
    path = path.strip()
    if not path.startswith("$"):
        raise RuleError("a JSON path starts with $, e.g. $.card.number or $..email")
    steps: list[tuple[str, Any]] = []
    position = 1
    while position < len(path):
        match = _STEP.match(path, position)
        if match is None:
            raise RuleError(f"cannot read the JSON path from {path[position:]!r}")
        if match["descend"]:
            steps.append(("descend", match["descend"]))
        elif match["child"]:
            steps.append(("child", match["child"]))
        else:
            index = match["index"]
            if index[0] in "'\"":
                steps.append(("child", index[1:-1]))
            else:
                steps.append(("index", "*" if index == "*" else int(index)))
        position = match.end()
    if not steps:
        raise RuleError("the JSON path $ alone would mask the whole body; name a field")
    return steps


def _masked_at(node: Any, steps: list[tuple[str, Any]]) -> Any:
    """``node`` with every value the steps reach replaced by MASK."""
    if not steps:
        return MASK
    (kind, key), rest = steps[0], steps[1:]
    if kind == "descend":
        node = _masked_at(node, [("child", key), *rest])
        if isinstance(node, dict):
            return {k: _masked_at(v, steps) for k, v in node.items()}
        if isinstance(node, list):
            return [_masked_at(v, steps) for v in node]
        return node
    if isinstance(node, dict) and (kind == "child" or key == "*"):
        return {k: (_masked_at(v, rest) if key in ("*", k) else v) for k, v in node.items()}
    if isinstance(node, list) and (kind == "index" or key == "*"):
        return [(_masked_at(v, rest) if key in ("*", i) else v) for i, v in enumerate(node)]
    return node


def compile_rule(kind: str, pattern: str):
    """The compiled form of one rule; raises RuleError when the pattern is unusable."""
    if not pattern.strip():
        raise RuleError("the pattern is empty")
    if kind == "json_path":
        return parse_json_path(pattern)
    if kind == "header":
        return re.compile(fnmatch.translate(pattern.strip().lower()))
    if kind == "regex":
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise RuleError(f"not a regular expression: {exc}") from None
        if compiled.match(""):
            raise RuleError("the expression matches empty text, which would mask nothing useful")
        return compiled
    raise RuleError(f"unknown kind of rule {kind!r}")


class Redactor:
    """The enabled rules, compiled, and how they mask each kind of content.

    Every value is masked as a user would read it, not as it is stored: a header kept as bytes
    (``{"$bytes": ...}``) or a number is masked as its text, a string holding JSON is masked as
    that JSON, and a JSON body is parsed first, so ``"\\u0034\\u0031..."`` is masked as the
    ``41...`` it decodes to. A rule that would miss a value because of how it was written
    would be a leak, so every reader goes through :meth:`value` or :meth:`string`.
    """

    def __init__(self, rules: Iterable[tuple[str, str]]) -> None:
        self.paths, self.headers_, self.regexes = [], [], []
        for kind, pattern in rules:
            try:
                compiled = compile_rule(kind, pattern)
            except RuleError:
                continue  # rules are checked when saved; one broken since must not break pages
            {"json_path": self.paths, "header": self.headers_, "regex": self.regexes}[kind].append(compiled)
        # "name": patterns for the JSON-path rules in text that is not JSON (None: no name).
        self.field_patterns = [None if name is None else re.compile(r'"' + re.escape(name) + r'"\s*:\s*')
                               for name in _field_names(self.paths)]

    @classmethod
    def current(cls) -> Redactor:
        from console.models import RedactionRule

        return cls(RedactionRule.objects.filter(enabled=True).values_list("kind", "pattern"))

    def text(self, value: str) -> str:
        """``value`` with every match of the regular expressions masked (no parsing)."""
        for regex in self.regexes:
            value = regex.sub(MASK, value)
        return value

    def hides_header(self, name: str) -> bool:
        lowered = str(name).lower()
        return any(rule.match(lowered) for rule in self.headers_)

    def string(self, value: str) -> str:
        """A text as a reader sees it, masked: JSON in it (a body, a header holding JSON, a JSON
        string literal) is parsed and masked by every rule, then written back decoded; other
        text gets the regular expressions, and the JSON-path rules by the field they name (a
        diff or a cut-off body still shows ``"number": "..."`` as text)."""
        parsed = _json_in(value)
        if parsed is _NOT_JSON:
            return self.text(self._fields_in_text(value))
        masked = self._json(parsed)  # whole JSON: the paths apply exactly, not by field name
        if masked != parsed:
            value = json.dumps(masked, ensure_ascii=False)
        return self.text(value)

    def value(self, value: Any) -> Any:
        """Tagged JSON (headers, properties, envelope details, audit details, job fields) with
        keys named by header rules masked and every value masked as the text it is shown as:
        strings, bytes, numbers, decimals, nested tables and lists."""
        if isinstance(value, dict):
            if len(value) == 1:
                (tag, inner), = value.items()
                if tag in _TEXT_TAGS and isinstance(inner, str):
                    return self._tagged(tag, inner)
            return {k: (MASK if self.hides_header(k) else self.value(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return MASK if self.text(str(value)) != str(value) else value
        return value

    def body(self, raw: bytes) -> bytes | None:
        """The masked body, or None when it is binary (not UTF-8) and cannot be masked."""
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return None
        return self.string(text).encode("utf-8")

    def envelope(self, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields`` (a letter's, a failure group's) with the envelope's texts masked: the
        exception's type, message and stack and the envelope details are copied from headers
        that frameworks write, so they hold whatever the message held."""
        return self._named(fields, ENVELOPE_FIELDS)

    def job_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A job's typed texts (reason, ticket, target, filter, log, error) masked: an operator
        may type or filter on a card number, and a log line may quote a broker's answer."""
        return self._named(fields, JOB_FIELDS)

    def _named(self, fields: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
        """A copy of ``fields`` with those of these names masked."""
        return {name: self.value(value) if name in names else value for name, value in fields.items()}

    def event_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """An audit event's row (API, exports) with the texts people typed and its details
        masked (every rule kind: an edit's body diff gets the JSON-path rules by field name,
        see :meth:`string`)."""
        return self._named(row, AUDIT_FIELDS)

    def _tagged(self, tag: str, inner: str) -> Any:
        errors = _BASE64_TEXT.get(tag)
        if errors is None:  # $decimal, $float, $ts: shown as their text, so masked as it
            return {tag: MASK} if self.string(inner) != inner else {tag: inner}
        text = base64.b64decode(inner).decode("utf-8", errors)
        masked = self.string(text)
        if masked == text:
            return {tag: inner}
        return {tag: base64.b64encode(masked.encode("utf-8", errors)).decode("ascii")}

    def _json(self, parsed: Any) -> Any:
        for steps in self.paths:
            parsed = _masked_at(parsed, steps)
        return self.value(parsed)

    def _fields_in_text(self, text: str) -> str:
        """JSON-path rules applied to text that is not whole JSON, by the field each ends with:
        ``"number": <value>`` is masked wherever it appears (a superset of what the path names,
        which is the safe side). A path that ends in no field name hides JSON-looking text."""
        if not self.paths or '"' not in text:
            return text
        for pattern in self.field_patterns:
            if pattern is None:
                return MASK if '":' in text or '" :' in text else text
            text = _mask_field_values(text, pattern)
        return text


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
_TEXT_TAGS = ("$bytes", "$str", "$decimal", "$float", "$ts")
#: Tags holding base64, masked as the text they decode to, with the codec error handler that
#: gives back the exact bytes: bytes that are not UTF-8 are masked too (a card number in ASCII
#: inside binary would otherwise leave in the base64), and ``$str`` keeps lone surrogates.
_BASE64_TEXT = {"$bytes": "surrogateescape", "$str": "surrogatepass"}
_NOT_JSON = object()
_SCALAR = re.compile(r"[^,}\]\s]*")


def _json_in(text: str) -> Any:
    """The JSON value ``text`` holds when it is an object, array or string literal; else _NOT_JSON.
    (A bare number stays text: the regular expressions see it as it is written.)"""
    if text.lstrip()[:1] not in ("{", "[", '"'):
        return _NOT_JSON
    try:
        return bounded_json.loads(text)  # content is hostile: too deep or too large is masked as text
    except (ValueError, RecursionError):
        return _NOT_JSON


def _field_names(paths: list[list[tuple[str, Any]]]) -> list[str | None]:
    """The last field name of each path (``$.cards[*]`` -> cards), None for a path with none."""
    names: list[str | None] = []
    for steps in paths:
        named = [key for kind, key in steps if kind in ("child", "descend") and key != "*"]
        names.append(named[-1] if named else None)
    return list(dict.fromkeys(names))


def _mask_field_values(text: str, pattern: re.Pattern) -> str:
    """Every value written after ``"name":`` (``pattern``) in ``text`` replaced by "***": a
    string, a number or literal, or an object or array up to its closing bracket (or the end)."""
    out, position = [], 0
    for match in pattern.finditer(text):
        if match.start() < position:
            continue
        start = match.end()
        end = _value_end(text, start)
        out.append(text[position:start])
        out.append(f'"{MASK}"')
        position = end
    out.append(text[position:])
    return "".join(out)


def _value_end(text: str, start: int) -> int:
    """Where the JSON value starting at ``start`` ends (the end of text if it is cut off)."""
    if start >= len(text):
        return start
    first = text[start]
    if first == '"':
        index = start + 1
        while index < len(text):
            if text[index] == "\\":
                index += 2
                continue
            if text[index] == '"':
                return index + 1
            index += 1
        return len(text)
    if first in "{[":
        depth, index, in_string = 0, start, False
        while index < len(text):
            char = text[index]
            if in_string:
                if char == "\\":
                    index += 1
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
                if depth == 0:
                    return index + 1
            index += 1
        return len(text)
    return _SCALAR.match(text, start).end()


def for_user(user) -> Redactor | None:
    """The redactor for what ``user`` is shown, or None when they may see content unmasked."""
    return None if has(user, SEE_UNREDACTED) else Redactor.current()


def for_export() -> Redactor:
    """Exports are masked whoever asks for them."""
    return Redactor.current()


def mask_previews(user, letters: list) -> None:
    """Replace the ``preview`` of each listed letter by one made from its masked body, for a user
    who may not see content unmasked (one query for the whole list)."""
    redactor = for_user(user)
    if redactor is None or not letters:
        return
    from django.db.models import BinaryField
    from django.db.models.functions import Substr

    from console.models import DeadLetter

    heads = dict(DeadLetter.objects.filter(id__in=[letter.pk for letter in letters])
                 .annotate(head=Substr("body", 1, PREVIEW_SOURCE_BYTES, output_field=BinaryField()))
                 .values_list("id", "head"))
    for letter in letters:
        letter.preview = masked_preview(redactor, bytes(heads.get(letter.pk) or b""), letter.body_size)


def masked_preview(redactor: Redactor, head: bytes, size: int) -> str:
    """A one-line preview of a masked body; a body too large to mask whole is not previewed."""
    if size > len(head):
        return "(preview hidden: the body is too large to mask here)"
    masked = redactor.body(head)
    if masked is None:
        return f"(binary, {size} bytes, hidden)"
    return body_preview(masked, len(masked))


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
    unmasked. The one door for envelopes on the pages; the API uses :meth:`Redactor.envelope`."""
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
    None: hidden; ``envelope``: the ENVELOPE_FIELDS a letter has, by name)."""

    def __init__(self, user, letter) -> None:
        redactor = for_user(user)
        self.masked = redactor is not None
        envelope = {name: getattr(letter, name) for name in ENVELOPE_FIELDS if hasattr(letter, name)}
        if redactor is None:
            self.headers, self.properties, self.body = letter.headers, letter.properties, letter.body_bytes
            self.envelope = envelope
        else:
            self.headers = redactor.value(letter.headers)
            self.properties = redactor.value(letter.properties)
            self.body = redactor.body(letter.body_bytes)
            self.envelope = redactor.envelope(envelope)
