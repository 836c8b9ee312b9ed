"""The one syntax of a JSON path in the console, read by a rule's body path
(console.services.rules.values) and a redaction rule's JSON path (console.access.redactor).

    $.order.items[0].sku    order.items.0.sku    $..email    $.items[*].iban    $['card']['cvc']

- ``$`` is the document; it may be left out, and so may the dot before the first field.
- ``.name`` is a field. A name is any characters but ``.``, ``[`` and ``]``; ``*`` is every field.
- ``..name`` is a field at any depth (``..*``: everything below).
- ``[n]`` is an item of a list (ASCII digits), ``[*]`` every item.
- ``['name']``, ``["name"]`` and ``[name]`` are a field whose name holds dots, brackets or spaces.

Each step is a ``(kind, key)``: ``("child", name)``, ``("descend", name)`` or ``("index", n)``,
with ``"*"`` as the key of a wildcard. What a reader does with them is its own: redaction masks
every value they reach; a rule reads one place (console.services.rules.values.path_steps).

No Django here: every layer may import it.
"""

from __future__ import annotations

import re

from console.refusals import Refusal

CHILD, DESCEND, INDEX = "child", "descend", "index"
WILDCARD = "*"

Step = tuple[str, str | int]

_NAME = r"[^.\[\]]+"
_STEP = re.compile(
    rf"\.\.(?P<descend>{_NAME})"
    rf"|\.(?P<child>{_NAME})"
    rf"|\[(?:(?P<index>[0-9]+|\*)|'(?P<single>[^']*)'|\"(?P<double>[^\"]*)\"|(?P<bare>[^.\[\]'\"]+))\]"
)
_FIRST_FIELD = re.compile(rf"(?P<child>{_NAME})")


class PathError(Refusal):
    """A JSON path that cannot be read, with what is wrong in it."""


def steps(path: str) -> list[Step]:
    """The steps of ``path`` (see the module's docstring); PathError when it cannot be read or
    names nothing but the whole document."""
    text = path.strip()
    position = 1 if text.startswith("$") else 0
    found: list[Step] = []
    while position < len(text):
        match = _STEP.match(text, position) or (None if found else _FIRST_FIELD.match(text, position))
        if match is None:
            raise PathError(f"cannot be read from {text[position:]!r}")
        found.append(_step(match))
        position = match.end()
    if not found:
        raise PathError("names no field ($ alone is the whole body)")
    return found


def _step(match: re.Match[str]) -> Step:
    groups = match.groupdict()
    if groups.get("descend") is not None:
        return DESCEND, groups["descend"]
    if groups.get("index") is not None:
        index = groups["index"]
        return INDEX, WILDCARD if index == WILDCARD else int(index)
    name = next(groups[group] for group in ("child", "single", "double", "bare") if groups.get(group) is not None)
    return CHILD, name
