"""How a word typed to find letters matches a text of theirs: one reading for the letters'
filters (pages and ``/api/letters/``) and for rules' matches, so the same words find the same
letters wherever they are typed.

=============================  ==========================================  ==========================
typed                          finds letters whose text                    e.g. finds
=============================  ==========================================  ==========================
``declined``                   holds it, in any case                       ``PaymentDeclinedException``
``"com.shop.Declined"``        is it exactly, case included                only ``com.shop.Declined``
=============================  ==========================================  ==========================

The texts read so: exception type (filter ``exception``, rule ``exception_type``), exception
message (rule ``exception_message``), origin queue or address (``origin``), reason
(``reason``), a header's value (``header_value``; rule ``header.value``), consumer and host
(filters). A rule's ``exception_type`` and ``exception_message`` also take a regular
expression (PostgreSQL's, in any case: a plain word is one that finds a part); a quoted word is
exact there too. Names (a header's name, a place, a fingerprint) are not such texts.

The console's own links to a filtered list quote what they name (:func:`quoted`), so that a
link finds the letters of the figure it was drawn from, not those of longer names too.
"""

from __future__ import annotations

from django.db.models import Q

QUOTE = '"'
#: What a field that takes such words says of them.
HINT = 'a part of the text, in any case; "in quotes": the whole text, exactly'
#: The letters' filter keys that take such words.
FILTER_KEYS = ("origin", "reason", "exception", "header_value", "consumer", "host")


def exactly(word: str) -> str | None:
    """The text of a quoted word (``"orders"`` -> ``orders``), None for a word to find in part."""
    if len(word) >= 2 and word.startswith(QUOTE) and word.endswith(QUOTE):
        return word[1:-1]
    return None


def quoted(text: str) -> str:
    """A text as a word that finds it exactly (the console's own links)."""
    return f"{QUOTE}{text}{QUOTE}"


def finds(word: str, text: object) -> bool:
    """Whether ``word`` matches ``text`` as :func:`condition` has PostgreSQL decide it (a letter
    confirmed in Python as a masked reader sees it: console.services.selection)."""
    if not isinstance(text, str):
        return False
    whole = exactly(word)
    return text == whole if whole is not None else word.lower() in text.lower()


def condition(word: str, *fields: str) -> Q:
    """Letters whose ``fields`` (any of them) match ``word`` as the table above reads it."""
    whole = exactly(word)
    lookups = [{field: whole} for field in fields] if whole is not None else [
        {f"{field}__icontains": word} for field in fields]
    found = Q()
    for lookup in lookups:
        found |= Q(**lookup)
    return found
