"""Charts drawn on the server as SVG: no chart library, no script in the page.

Each chart is built from plain numbers. Every piece of text that reaches the SVG (titles,
series labels such as origin names or exception types, which come from hostile messages) goes
through ``escape``; the result is marked safe only once it is assembled here. Each chart
carries a ``<title>`` and an ``aria-label``, and the template shows the same numbers in a table
for readers who cannot see the picture.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

#: Series colours: the page's accent first, then darker and lighter neighbours and greys, so
#: the charts keep to the one-accent look while five lines stay apart (each also has a dash).
PALETTE = ("#1f5fa8", "#0f2f54", "#6f9bd1", "#5f6670", "#9aa3ad", "#174a84", "#3d7cc9", "#2b2f36")
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2")
#: The legend's layout: labels per row, and the width of one character of its 11px text, so
#: a long label (an exception's class name) is cut with "…" before it runs into the next one.
LEGEND_COLUMNS = 2
LEGEND_CHAR_WIDTH = 6.3


@dataclass
class Series:
    """One line: a label and its (moment, value) points in time order."""

    label: str
    points: list[tuple[datetime, float]]


@dataclass
class Chart:
    """An SVG picture and the same numbers as table rows (moment, value per series)."""

    title: str
    svg: SafeString
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.rows


def _fmt_number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _fmt_moment(moment: datetime, daily: bool) -> str:
    local = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    return local.strftime("%Y-%m-%d") if daily else local.strftime("%m-%d %H:%M")


def _nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 5 x 10^k at or above ``value`` (so the axis reads well)."""
    if value <= 0:
        return 1
    step = 1.0
    while step * 10 <= value:
        step *= 10
    for factor in (1, 2, 5, 10):
        if value <= factor * step:
            return factor * step
    return 10 * step


def line_chart(
    title: str,
    series: Sequence[Series],
    *,
    daily: bool = False,
    width: int = 620,
    height: int = 200,
) -> Chart:
    """Lines over time sharing one y axis from zero, with a legend when there is more than one."""
    moments = sorted({moment for s in series for moment, _ in s.points})
    columns = ["When", *[s.label for s in series]]
    by_series = [dict(s.points) for s in series]
    rows = [
        [_fmt_moment(m, daily), *[_fmt_number(values[m]) if m in values else "" for values in by_series]]
        for m in moments
    ]
    if not moments:
        return Chart(title, _empty_svg(title, width), columns, [])

    legend_rows = (len(series) + LEGEND_COLUMNS - 1) // LEGEND_COLUMNS if len(series) > 1 else 0
    left, right, top, bottom = 52, 12, 10, 24 + 18 * legend_rows
    plot_w, plot_h = width - left - right, height - top - bottom
    start, end = moments[0].timestamp(), moments[-1].timestamp()
    span = (end - start) or 1.0
    y_max = _nice_ceiling(max((v for s in series for _, v in s.points), default=0))

    def x(moment: datetime) -> float:
        return left + (moment.timestamp() - start) / span * plot_w if len(moments) > 1 else left + plot_w / 2

    def y(value: float) -> float:
        return top + plot_h - (value / y_max) * plot_h

    parts = [_open_svg(title, width, height)]
    for fraction in (0, 0.5, 1):
        value = y_max * fraction
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{escape(_fmt_number(value))}</text>'
        )
    tick_moments = moments if len(moments) <= 4 else [moments[round(i * (len(moments) - 1) / 3)] for i in range(4)]
    for i, moment in enumerate(tick_moments):
        anchor = "start" if i == 0 and len(tick_moments) > 1 else "end" if i == len(tick_moments) - 1 and i else "middle"
        parts.append(
            f'<text class="axis" x="{x(moment):.1f}" y="{top + plot_h + 15}" text-anchor="{anchor}">'
            f"{escape(_fmt_moment(moment, daily))}</text>"
        )
    for index, s in enumerate(series):
        colour, dash = PALETTE[index % len(PALETTE)], DASHES[index % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        points = " ".join(f"{x(m):.1f},{y(v):.1f}" for m, v in s.points)
        parts.append(
            f'<polyline class="line" points="{points}" stroke="{colour}"{dash_attr}>'
            f"<title>{escape(s.label)}</title></polyline>"
        )
        if len(s.points) == 1:
            (m, v), = s.points
            parts.append(f'<circle cx="{x(m):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>')
        if legend_rows:
            column_w = plot_w / LEGEND_COLUMNS
            lx = left + (index % LEGEND_COLUMNS) * column_w
            ly = top + plot_h + 34 + 18 * (index // LEGEND_COLUMNS)
            fits = int((column_w - 34) / LEGEND_CHAR_WIDTH)
            parts.append(
                f'<line x1="{lx:.1f}" x2="{lx + 18:.1f}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" '
                f'stroke-width="2.5"{dash_attr}/>'
                f'<text class="legend" x="{lx + 24:.1f}" y="{ly}">{escape(_clip(s.label, fits))}</text>'
            )
    parts.append("</svg>")
    return Chart(title, mark_safe("".join(parts)), columns, rows)


def sparkline(label: str, values: Sequence[float], *, width: int = 110, height: int = 24) -> SafeString:
    """A tiny trend line (no axes) for a table cell; the label says what it shows."""
    if not values:
        return mark_safe("")
    peak = max(values) or 1
    step = width / max(len(values) - 1, 1)
    points = " ".join(
        f"{i * step:.1f},{height - 2 - (v / peak) * (height - 4):.1f}" for i, v in enumerate(values)
    )
    if len(values) == 1:
        points = f"0,{height - 2 - (values[0] / peak) * (height - 4):.1f} {width},{height - 2 - (values[0] / peak) * (height - 4):.1f}"
    return mark_safe(
        f'<svg class="sparkline" role="img" aria-label="{escape(label)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(label)}</title>'
        f'<polyline points="{points}" fill="none" stroke="{PALETTE[0]}" stroke-width="1.5"/></svg>'
    )


def _clip(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def _open_svg(title: str, width: int, height: int) -> str:
    return (
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    )


def _empty_svg(title: str, width: int) -> SafeString:
    height = 40
    return mark_safe(
        _open_svg(title, width, height)
        + '<text class="axis" x="8" y="24">No samples yet.</text></svg>'
    )
