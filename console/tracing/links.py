"""A trace id as a link to the site's tracing UI: ``DLO_TRACE_URL``, a URL template with
``{trace_id}`` (and ``{span_id}`` if the UI takes one), read once at start (console.settings).

The template is the operator's; the ids come from message headers, which anyone who can
publish wrote. So an id is substituted only once it is known to be one (lowercase hex of the
right length, not all zero: console.tracing.context), URL-quoted all the same, and a template
is refused at start unless it is an absolute http(s) URL whose scheme and host no id can
change, with no placeholder but those two. Plain Python: settings.py imports it.
"""

from __future__ import annotations

import string
from urllib.parse import quote, urlsplit

from console.env import ConfigError
from console.tracing.context import valid_span_id, valid_trace_id

PLACEHOLDERS = ("trace_id", "span_id")
# Two different ids of the right shape: a template whose host or scheme differs between them
# lets an id choose where the link goes.
_SAMPLES = ({"trace_id": "0" * 31 + "1", "span_id": "0" * 15 + "1"},
            {"trace_id": "f" * 32, "span_id": "f" * 16})


def trace_url_template(value: str, name: str = "DLO_TRACE_URL") -> str:
    """``value`` if it is a usable template ("" for none), else ConfigError saying why."""
    value = value.strip()
    if not value:
        return ""
    if any(ord(char) < 0x21 or ord(char) == 0x7F for char in value):
        raise ConfigError(f"{name} holds spaces or control characters; URL-encode them (%20)")
    try:
        fields = [(field, spec, conversion) for _, field, spec, conversion in string.Formatter().parse(value)
                  if field is not None]
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a template: {exc} (write a literal brace as {{{{ or }}}})") \
            from None
    unknown = sorted({field for field, _, _ in fields if field not in PLACEHOLDERS})
    if unknown:
        raise ConfigError(f"{name} names {', '.join('{' + f + '}' for f in unknown)}; only {{trace_id}} and "
                          f"{{span_id}} can be filled in")
    if any(spec or conversion for _, spec, conversion in fields):
        raise ConfigError(f"{name}: write {{trace_id}} and {{span_id}} plainly, without a format or conversion")
    if "trace_id" not in {field for field, _, _ in fields}:
        raise ConfigError(f"{name}={value!r} has no {{trace_id}}: every link would go to the same page")
    parts = [urlsplit(value.format(**sample)) for sample in _SAMPLES]
    if parts[0].scheme not in ("http", "https") or not parts[0].netloc:
        raise ConfigError(f"{name}={value!r} is not an absolute http(s) URL")
    if (parts[0].scheme, parts[0].netloc) != (parts[1].scheme, parts[1].netloc):
        raise ConfigError(f"{name}: {{trace_id}} and {{span_id}} may stand only in the path, query or fragment")
    return value


def trace_url(template: str, trace_id: str, span_id: str = "") -> str:
    """The link for a trace (and its span), or "" when there is no template or the trace id is
    not one. A span id that is not one is left out (empty)."""
    if not template or not valid_trace_id(trace_id):
        return ""
    span = span_id if valid_span_id(span_id) else ""
    return template.format(trace_id=quote(trace_id, safe=""), span_id=quote(span, safe=""))
