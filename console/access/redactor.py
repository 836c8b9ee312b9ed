"""The masking engine: the redaction rules (console.models.RedactionRule), compiled, and how they
find and mask values in text, JSON, headers and tagged values. Who is shown what masked is
console.access.redaction_policy's.

Rules: JSON paths (console.json_path) apply to bodies that parse as JSON (and to JSON held in
header values and audit details; in text that is not whole JSON, such as an edit's body diff, to
every value of the field the path ends with), header names to headers and properties (and to
keys of audit details), regular expressions to every text that is left, after decoding: bytes,
numbers and JSON escapes are masked as the text a reader is shown. A body that is not text
(binary) cannot be masked reliably, so a masked reader does not see it at all.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import re
from collections.abc import Iterable
from typing import Any

from console import json_path
from console.letters import bounded_json
from console.letters.values import body_preview
from console.refusals import Refusal

MASK = "***"
#: A viewer's preview is made from at most this much of the masked body.
PREVIEW_SOURCE_BYTES = 64 * 1024


class RuleError(Refusal):
    """A redaction rule's pattern cannot be used."""


def _masked_at(node: Any, steps: list[json_path.Step]) -> Any:
    """``node`` with every value the steps reach replaced by MASK."""
    if not steps:
        return MASK
    (kind, key), rest = steps[0], steps[1:]
    if kind == json_path.DESCEND:
        node = _masked_at(node, [(json_path.CHILD, key), *rest])
        if isinstance(node, dict):
            return {k: _masked_at(v, steps) for k, v in node.items()}
        if isinstance(node, list):
            return [_masked_at(v, steps) for v in node]
        return node
    anything = key == json_path.WILDCARD
    if isinstance(node, dict) and (kind == json_path.CHILD or anything):
        return {k: (_masked_at(v, rest) if anything or k == key else v) for k, v in node.items()}
    if isinstance(node, list) and (kind == json_path.INDEX or anything):
        return [(_masked_at(v, rest) if anything or i == key else v) for i, v in enumerate(node)]
    return node


def compile_rule(kind: str, pattern: str):
    """The compiled form of one rule; raises RuleError when the pattern is unusable."""
    if not pattern.strip():
        raise RuleError("the pattern is empty")
    if kind == "json_path":
        try:
            return json_path.steps(pattern)
        except json_path.PathError as exc:
            raise RuleError(f"the JSON path {exc}") from None
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
        self.paths: list[list[json_path.Step]] = []
        self.headers_: list[re.Pattern[str]] = []
        self.regexes: list[re.Pattern[str]] = []
        by_kind: dict[str, list[Any]] = {"json_path": self.paths, "header": self.headers_, "regex": self.regexes}
        for kind, pattern in rules:
            try:
                compiled = compile_rule(kind, pattern)
            except RuleError:
                continue  # rules are checked when saved; one broken since must not break pages
            by_kind[kind].append(compiled)
        # "name": patterns for the JSON-path rules in text that is not JSON (None: no name).
        self.field_patterns = [None if name is None else re.compile(r'"' + re.escape(name) + r'"\s*:\s*')
                               for name in _field_names(self.paths)]

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
        masked = self.document(parsed)  # whole JSON: the paths apply exactly, not by field name
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

    def _tagged(self, tag: str, inner: str) -> Any:
        errors = _BASE64_TEXT.get(tag)
        if errors is None:  # $decimal, $float, $ts: shown as their text, so masked as it
            return {tag: MASK} if self.string(inner) != inner else {tag: inner}
        text = base64.b64decode(inner).decode("utf-8", errors)
        masked = self.string(text)
        if masked == text:
            return {tag: inner}
        return {tag: base64.b64encode(masked.encode("utf-8", errors)).decode("ascii")}

    def document(self, parsed: Any) -> Any:
        """A parsed JSON body (or a body's decoded value) masked by every rule."""
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


def _field_names(paths: list[list[json_path.Step]]) -> list[str | None]:
    """The last field name of each path (``$.cards[*]`` -> cards), None for a path with none."""
    names: list[str | None] = []
    for steps in paths:
        named = [str(key) for kind, key in steps
                 if kind in (json_path.CHILD, json_path.DESCEND) and key != json_path.WILDCARD]
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
    scalar = _SCALAR.match(text, start)  # always matches, if only the empty text
    return scalar.end() if scalar else start


def masked_preview(redactor: Redactor, head: bytes, size: int) -> str:
    """A one-line preview of a masked body; a body too large to mask whole is not previewed."""
    if size > len(head):
        return "(preview hidden: the body is too large to mask here)"
    masked = redactor.body(head)
    if masked is None:
        return f"(binary, {size} bytes, hidden)"
    return body_preview(masked, len(masked))
