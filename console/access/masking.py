"""Masking by default on the way out: who reads this answer, and the API's side of it.

Every text that leaves the console passes the reader's redactor unless it is declared safe
(design invariant 9). This module holds the two halves the API and the pages share:

1. **The reader.** :class:`ReaderMiddleware` remembers the request being answered (a
   context variable); :func:`current_redactor` gives its redactor, computed once per request
   and user, on first use (after DRF has authenticated a token). Outside a request (a script,
   a task, a test rendering by hand) no reader is known, and everything is masked.
2. **Serializers.** :class:`MaskedSerializer` and :class:`MaskedModelSerializer` mask every
   field's value in ``to_representation``, unless the field is safe by type (numbers, booleans,
   moments, choices, primary keys: see :func:`is_safe_field`) or by name (``safe_fields``: ids,
   hashes, code-made names). A new text field is masked without anyone remembering it.
   :class:`MaskingJSONRenderer` is the net under them: an answer (or the part of one) that did
   not come from a masked serializer, such as a plain dict or an error body, is masked whole.

The pages' half is console.access.template_masking (one loader, one ``shown`` filter).
"""

from __future__ import annotations

import contextvars
import datetime
import decimal
from typing import Any

from rest_framework import relations, serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from console.access.redaction_policy import for_everyone, for_user
from console.access.redactor import Redactor

_request: contextvars.ContextVar = contextvars.ContextVar("dlo_reader_request", default=None)
_CACHE = "_dlo_redactor"


class ReaderMiddleware:
    """Remembers, while a request is answered, whose answer it is (for the pages' ``shown``
    filter, serializers built without a context and the API's renderer)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


def redactor_for_request(request) -> Redactor | None:
    """The redactor of whoever ``request`` (Django's or DRF's) is answered for, once per request
    and user (None: they see content unmasked)."""
    http = getattr(request, "_request", request)  # DRF's Request wraps Django's
    user = getattr(http, "user", None)
    key = (getattr(user, "pk", None), bool(getattr(user, "is_authenticated", False)))
    cached = getattr(http, _CACHE, None)
    if cached is not None and cached[0] == key:
        return cached[1]
    redactor = for_user(user) if user is not None else for_everyone()
    setattr(http, _CACHE, (key, redactor))
    return redactor


def current_redactor() -> Redactor | None:
    """The redactor of the request being answered; outside a request, every rule applies."""
    request = _request.get()
    return for_everyone() if request is None else redactor_for_request(request)


# -- the API -------------------------------------------------------------------------------

#: Field types whose values are made by code, never typed or carried by a message: numbers,
#: booleans, moments, choices (enum values) and primary keys.
SAFE_TYPES = (
    serializers.IntegerField, serializers.FloatField, serializers.BooleanField, serializers.DateTimeField,
    serializers.DateField, serializers.DurationField, serializers.ChoiceField, relations.PrimaryKeyRelatedField,
)


def is_safe_field(serializer, name: str, field) -> bool:
    """Whether ``field`` of ``serializer`` may leave unmasked: declared safe by name, safe by
    type, a list of safe values, or a masked serializer (which masks its own fields)."""
    if name in getattr(serializer, "safe_fields", ()):
        return True
    if isinstance(field, serializers.ListSerializer):
        return isinstance(field.child, MaskedSerializerMixin)
    if isinstance(field, MaskedSerializerMixin):
        return True
    if isinstance(field, serializers.MultipleChoiceField):
        return True
    if isinstance(field, (serializers.ListField, relations.ManyRelatedField)):
        child = getattr(field, "child", None) or getattr(field, "child_relation", None)
        return isinstance(child, SAFE_TYPES)
    return isinstance(field, SAFE_TYPES)


def serializer_redactor(serializer) -> Redactor | None:
    """The redactor of the serializer's reader: the request in its context, else the request
    being answered, else every rule (a serializer used by a script masks)."""
    context = serializer.context
    request = context.get("request")
    if request is not None:
        return redactor_for_request(request)
    if "_redactor" not in context:  # once per answer, not once per row
        context["_redactor"] = current_redactor()
    return context["_redactor"]


class MaskedSerializerMixin:
    """Masks every field that is not declared safe, for a reader who may not see content.

    ``safe_fields``: names of fields whose values are made by code (ids, hashes, fingerprints).
    Subclasses with content of their own (a letter's body) override :meth:`mask`."""

    safe_fields: tuple[str, ...] = ()
    fields: Any  # the serializer's own (this is its mixin)

    def to_representation(self, instance):
        data = super().to_representation(instance)
        redactor = serializer_redactor(self)
        return data if redactor is None else self.mask(data, instance, redactor)

    def mask(self, data, instance, redactor: Redactor, done: tuple[str, ...] = ()):
        """``data`` with every field not safe (nor in ``done``, masked by the caller) masked."""
        for name, field in self.fields.items():
            if name in data and name not in done and not is_safe_field(self, name, field):
                data[name] = redactor.value(data[name])
        return data


class MaskedSerializer(MaskedSerializerMixin, serializers.Serializer):
    """The base of every serializer the API answers with (see MaskedSerializerMixin)."""


class MaskedModelSerializer(MaskedSerializerMixin, serializers.ModelSerializer):
    """The base of every model serializer the API answers with (see MaskedSerializerMixin)."""


def comes_masked(data: Any) -> bool:
    """Whether ``data`` is the output of a masked serializer."""
    return isinstance(data, (ReturnDict, ReturnList)) and _masked_serializer(getattr(data, "serializer", None))


def _masked_serializer(serializer) -> bool:
    if isinstance(serializer, serializers.ListSerializer):
        return isinstance(serializer.child, MaskedSerializerMixin)
    return isinstance(serializer, MaskedSerializerMixin)


class Plain(str):
    """A text declared safe where no serializer field declares it: made by code, or the reader's
    own input given back (a page's ``next`` link repeats the filter they typed)."""


_PLAIN = (Plain, bool, type(None), datetime.date, datetime.time, datetime.timedelta)


def masked_whole(data: Any, redactor: Redactor) -> Any:
    """``data`` with every value that did not come from a masked serializer masked."""
    if comes_masked(data):
        return data
    if isinstance(data, dict):
        return {key: ("***" if redactor.hides_header(key) else masked_whole(value, redactor))
                for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [masked_whole(value, redactor) for value in data]
    if isinstance(data, _PLAIN):
        return data
    if isinstance(data, decimal.Decimal):  # shown as its text, so masked as it
        return "***" if redactor.value(str(data)) != str(data) else data
    if isinstance(data, (str, int, float)):
        return redactor.value(data)
    return redactor.value(str(data))


class MaskingJSONRenderer(JSONRenderer):
    """DRF's JSON renderer, deny by default: what a view answers without a masked serializer
    (a dry run's dict, an error body, a page's ``next`` link) is masked whole for the reader."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        request = (renderer_context or {}).get("request")
        if data is not None:
            redactor = redactor_for_request(request) if request is not None else current_redactor()
            if redactor is not None:
                data = masked_whole(data, redactor)
        return super().render(data, accepted_media_type, renderer_context)
