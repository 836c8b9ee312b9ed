"""Masking by default on the pages: every ``{{ variable }}`` of our templates is masked.

One loader does it for every template under ``templates/`` (settings.TEMPLATES): when a
template is compiled, each variable node's filter chain gets ``shown`` first, so
``{{ note.text|linebreaksbr }}`` renders as ``{{ note.text|shown|linebreaksbr }}``, and each
variable given to a filter as an argument (``|default:letter.origin_address``) is masked too.
A variable whose value is made by code (a csrf token, a count the view computed) may be
declared safe with the marker filter ``|plain``; nothing else is left out. A page, an htmx
partial or a new template variable is masked without anyone remembering it
(tests/access/test_every_template_variable_is_masked.py holds the line).

``shown`` masks for the reader of the request being answered (console.access.masking's
reader, computed once per request): nothing for a reader who may see content unmasked; for
the others, texts, numbers and the texts inside lists and tables, and anything else by the text
it is shown as. It passes through what carries no text (None, booleans, moments), what cannot
be printed whole (query sets, pages, iterators: their items are printed one by one, each
through ``shown``), and HTML built by code (SafeData: a chart's SVG, ``block.super``), whose
producer masks what it embeds (console.web.charts). A form renders its own HTML; it is masked
by the regular expressions (the JSON-path rules cannot read HTML).
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.template.base import Template, VariableNode
from django.template.loaders import base, cached
from django.utils.functional import Promise
from django.utils.safestring import SafeData, mark_safe

from console.access.masking import current_redactor
from console.access.redactor import MASK, Redactor

_PASSED = (bool, type(None), datetime.date, datetime.time, datetime.timedelta, SafeData)


def shown(value: Any) -> Any:
    """``value`` as the current reader may see it (see the module's docstring)."""
    redactor = current_redactor()
    return value if redactor is None else masked_for_page(value, redactor)


def plain(value: Any) -> Any:
    """The marker of a variable declared safe: its value is made by code, never by a person
    or a message (the loader leaves such a variable unmasked)."""
    return value


shown.is_safe = False  # type: ignore[attr-defined]  # Django reads a filter's is_safe: escape a masked text
plain.is_safe = True  # type: ignore[attr-defined]  # the value is the code's own


def masked_for_page(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, _PASSED):
        return value
    if hasattr(value, "__html__"):  # a form, a widget, an error list: HTML that Django builds
        return mark_safe(redactor.text(str(value.__html__())))
    if isinstance(value, (str, int, float)):
        return redactor.value(value)
    if isinstance(value, decimal.Decimal):  # shown as its text, so masked as it
        return MASK if redactor.value(str(value)) != str(value) else value
    if isinstance(value, Promise):
        return redactor.string(str(value))
    if isinstance(value, (list, tuple, set, frozenset, Mapping)):
        return _masked_items(value, redactor)
    if _iterable_not_printed(value):
        return value
    return redactor.string(str(value))


def _masked_items(value, redactor: Redactor):
    """A list or table with its texts masked (objects in it stay: they are printed one by one)."""
    if isinstance(value, Mapping):
        return {key: (MASK if isinstance(key, str) and redactor.hides_header(key) else _item(item, redactor))
                for key, item in value.items()}
    return [_item(item, redactor) for item in value]


def _item(value, redactor: Redactor):
    if isinstance(value, (str, int, float, decimal.Decimal, list, tuple, set, frozenset, Mapping, Promise)):
        return masked_for_page(value, redactor)
    return value


def _iterable_not_printed(value) -> bool:
    """Query sets, pages, iterators: iterated by ``{% for %}``, never printed whole."""
    return hasattr(value, "__iter__") and not isinstance(value, (str, bytes))


# -- the loader -----------------------------------------------------------------------------


class _MaskedArgument:
    """A filter's variable argument, masked like the variable it filters."""

    def __init__(self, variable) -> None:
        self.variable = variable

    def resolve(self, context):
        return shown(self.variable.resolve(context))

    def __str__(self) -> str:
        return str(self.variable)


def is_plain(filter_expression) -> bool:
    return any(func is plain for func, _ in filter_expression.filters)


def is_masked(filter_expression) -> bool:
    """Whether a variable's filter chain starts with ``shown`` and masks its variable arguments."""
    filters = filter_expression.filters
    return bool(filters) and filters[0][0] is shown and all(
        not lookup or isinstance(arg, _MaskedArgument) for _, args in filters for lookup, arg in args
    )


def mask_variables(template: Template) -> None:
    """Put ``shown`` at the head of every variable's filter chain in ``template`` (but those
    marked ``plain``), and mask the variables its filters take as arguments."""
    for node in template.nodelist.get_nodes_by_type(VariableNode):
        expression = cast(VariableNode, node).filter_expression
        if is_plain(expression) or is_masked(expression):
            continue
        expression.filters = [(shown, []), *[
            (func, [(lookup, _MaskedArgument(arg) if lookup else arg) for lookup, arg in args])
            for func, args in expression.filters
        ]]


def ours(origin) -> bool:
    """Whether a template comes from the project's own folders (settings.TEMPLATES' DIRS)."""
    name = Path(str(origin.name)).resolve()
    return any(name.is_relative_to(Path(folder).resolve()) for folder in _our_folders())


def _our_folders() -> list:
    return [folder for engine in settings.TEMPLATES for folder in engine.get("DIRS", ())]


class _MaskOnCompile(base.Loader):
    """Compiles as Django's loaders do, then masks (before the cached loader keeps the
    template, so no thread ever gets it unmasked)."""

    def get_template(self, template_name, skip=None):
        template = super().get_template(template_name, skip)
        if ours(template.origin):
            mask_variables(template)
        return template


class Loader(cached.Loader, _MaskOnCompile):
    """Django's cached loader around the usual ones, masking every variable of our templates."""
