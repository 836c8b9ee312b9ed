"""``{{ minutes|duration }}``: a span of minutes as people read it (45 min, 3 h 12 min, 2 d 4 h)."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def duration(minutes) -> str:
    if minutes is None or minutes == "":
        return "—"
    whole = int(round(float(minutes)))
    days, rest = divmod(whole, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {mins} min" if mins else f"{hours} h"
    return f"{mins} min"
