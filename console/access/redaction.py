"""Masking letter content with the redaction rules (console.models.RedactionRule).

Who sees what: viewers see bodies, headers, previews and audit details masked; operators and
admins (the ``see_unredacted`` permission) see them as they are on the pages and the API, since
they triage them; exports are masked for everyone. The Parquet lake of console.pipeline is
not masked (it is an archive for the operators of the console, not an export).

Rules: JSON paths apply to bodies that parse as JSON, header names to headers and properties
(and to keys of audit details), regular expressions to every text that is left. A body that is
not text (binary) cannot be masked reliably, so a viewer does not see it at all.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable
from typing import Any

from console.access.roles import SEE_UNREDACTED, has

MASK = "***"
#: A viewer's preview is made from at most this much of the masked body.
PREVIEW_SOURCE_BYTES = 64 * 1024

_STEP = re.compile(r"\.\.(?P<descend>[\w-]+|\*)|\.(?P<child>[\w-]+|\*)|\[(?P<index>\d+|\*|'[^']*'|\"[^\"]*\")\]")


class RuleError(ValueError):
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
    """The enabled rules, compiled, and how they mask each kind of content."""

    def __init__(self, rules: Iterable[tuple[str, str]]) -> None:
        self.paths, self.headers_, self.regexes = [], [], []
        for kind, pattern in rules:
            try:
                compiled = compile_rule(kind, pattern)
            except RuleError:
                continue  # rules are checked when saved; one broken since must not break pages
            {"json_path": self.paths, "header": self.headers_, "regex": self.regexes}[kind].append(compiled)

    @classmethod
    def current(cls) -> Redactor:
        from console.models import RedactionRule

        return cls(RedactionRule.objects.filter(enabled=True).values_list("kind", "pattern"))

    def text(self, value: str) -> str:
        for regex in self.regexes:
            value = regex.sub(MASK, value)
        return value

    def hides_header(self, name: str) -> bool:
        lowered = str(name).lower()
        return any(rule.match(lowered) for rule in self.headers_)

    def structure(self, value: Any) -> Any:
        """JSON-like data with keys named by header rules masked and every string through the
        regular expressions (headers, properties, audit details)."""
        if isinstance(value, dict):
            return {k: (MASK if self.hides_header(k) else self.structure(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.structure(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def body(self, raw: bytes) -> bytes | None:
        """The masked body, or None when it is binary (not UTF-8) and cannot be masked."""
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return None
        if self.paths:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, (dict, list)):
                for steps in self.paths:
                    parsed = _masked_at(parsed, steps)
                text = json.dumps(parsed, ensure_ascii=False)
        return self.text(text).encode("utf-8")

    def event_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """An exported audit event with its reason and details masked."""
        return {**row, "reason": self.text(row.get("reason") or ""), "details": self.structure(row.get("details"))}


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
    from console.web.display import body_preview

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
        for event in events:
            event.details = redactor.structure(event.details)
            event.reason = redactor.text(event.reason or "")
    return events


class ShownContent:
    """A letter's headers, properties and body as a user may see them (``body`` None: hidden)."""

    def __init__(self, user, letter) -> None:
        redactor = for_user(user)
        self.masked = redactor is not None
        if redactor is None:
            self.headers, self.properties, self.body = letter.headers, letter.properties, letter.body_bytes
        else:
            self.headers = redactor.structure(letter.headers)
            self.properties = redactor.structure(letter.properties)
            self.body = redactor.body(letter.body_bytes)
