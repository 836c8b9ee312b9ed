"""The card number the masking tests plant, and every form in which it could leak."""

from __future__ import annotations

import base64
import json

CARD = "4111111111111111"
#: The redaction rule that masks it (a regular expression, as a site would write it).
CARD_RULE = ("regex", r"4111\d{12}")


def leaks(answer: str | bytes) -> list[str]:
    """The forms of CARD found in an answer: as it is, JSON-escaped (as ``\\u`` digits too) and
    as base64 of any text starting at it or a few characters before it."""
    text = answer.decode("utf-8", "replace") if isinstance(answer, bytes) else answer
    forms = {CARD, json.dumps(CARD)[1:-1], "".join(f"\\u{ord(c):04x}" for c in CARD)}
    for lead in ("", "x", "xx"):  # CARD at each of the three offsets a base64 group can start it
        encoded = base64.b64encode(f"{lead}{CARD}".encode()).decode()
        forms.add(encoded[4 if lead else 0:][:12])
    return [form for form in forms if form in text]
