"""Charts drawn on the server as SVG: no chart library, no script in the page.

Each chart is built from plain numbers. Every piece of text that reaches the SVG (titles,
series labels such as origin names or exception types, which come from hostile messages) goes
through ``escape``, which masks it for the reader and escapes it; the result is marked safe only
once it is assembled here. Each chart
carries a ``<title>`` and an ``aria-label``, and the template shows the same numbers in a table
for readers who cannot see the picture.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone
from django.utils.html import escape as escape_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import ngettext

from console.access.template_masking import shown

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
    points: Sequence[tuple[datetime, float]]


@dataclass
class Chart:
    """An SVG picture and the same numbers as table rows (moment, value per series)."""

    title: str
    svg: SafeString
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    #: A number to read beside the picture ("11 letters captured since 12:05").
    reading: str = ""

    @property
    def empty(self) -> bool:
        return not self.rows


def _fmt_number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _fmt_moment(moment: datetime, daily: bool) -> str:
    local = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    return local.strftime("%Y-%m-%d") if daily else local.strftime("%m-%d %H:%M")


def _time_ticks(first: datetime, last: datetime, plot_w: float, daily: bool) -> list[datetime]:
    """Up to four moments evenly spread in time from ``first`` to ``last``, as many as fit with
    two label widths between them (the first label is drawn from its tick rightwards, the last
    leftwards, the others centred): their labels never overlap, however the points cluster."""
    label_w = len(_fmt_moment(first, daily)) * LEGEND_CHAR_WIDTH
    count = min(4, 1 + int(plot_w // (2 * label_w)))
    if count < 2:
        return [first]
    step = (last - first) / (count - 1)
    return [first + step * i for i in range(count)]


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
    y_unit: str = "",
    x_unit: str = "",
    reading: str = "",
    nothing: str = "No samples yet.",
    width: int = 620,
    height: int = 200,
) -> Chart:
    """Lines over time sharing one y axis from zero, with a legend when there is more than one;
    ``y_unit`` and ``x_unit`` name what the axes count and how time is cut ("letters per
    minute", "time, UTC"), written above the plot; ``reading`` is a number to read beside it;
    ``nothing`` is what the chart says when there is no point to draw."""
    moments = sorted({moment for s in series for moment, _ in s.points})
    columns = ["When", *[s.label for s in series]]
    by_series = [dict(s.points) for s in series]
    rows = [
        [_fmt_moment(m, daily), *[_fmt_number(values[m]) if m in values else "" for values in by_series]]
        for m in moments
    ]
    if not moments:
        return Chart(title, _empty_svg(title, width, nothing), columns, [], reading)

    legend_rows = (len(series) + LEGEND_COLUMNS - 1) // LEGEND_COLUMNS if len(series) > 1 else 0
    left, right, top, bottom = 52, 12, 22 if y_unit or x_unit else 10, 24 + 18 * legend_rows
    height += top - 10
    plot_w, plot_h = width - left - right, height - top - bottom
    start, end = moments[0].timestamp(), moments[-1].timestamp()
    span = (end - start) or 1.0
    y_max = _nice_ceiling(max((v for s in series for _, v in s.points), default=0))

    def x(moment: datetime) -> float:
        return left + (moment.timestamp() - start) / span * plot_w if len(moments) > 1 else left + plot_w / 2

    def y(value: float) -> float:
        return top + plot_h - (value / y_max) * plot_h

    parts = [_open_svg(title, width, height)]
    if y_unit:
        parts.append(f'<text class="axis unit" x="4" y="11">{escape(y_unit)}</text>')
    if x_unit:
        parts.append(f'<text class="axis unit" x="{width - right}" y="11" text-anchor="end">{escape(x_unit)}</text>')
    for fraction in (0, 0.5, 1):
        value = y_max * fraction
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">'
            f'{escape(_fmt_number(value))}</text>'
        )
    tick_moments = _time_ticks(moments[0], moments[-1], plot_w, daily) if len(moments) > 1 else moments
    for i, moment in enumerate(tick_moments):
        last = len(tick_moments) - 1
        anchor = "start" if i == 0 and last > 0 else "end" if i == last and i else "middle"
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
    return Chart(title, mark_safe("".join(parts)), columns, rows, reading)


WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def heat_map(title: str, counts: dict[tuple[int, int], int], link: Callable[[int, int], str]) -> Chart:
    """Seven rows (ISO weekdays, Monday first) of 24 hours, each cell shaded by its count and a
    link (``link(weekday, hour)``) to what it counts; the numbers table has the same grid."""
    columns = ["Day", *[f"{hour:02d}" for hour in range(24)]]
    rows = [[WEEKDAYS[day - 1], *[_fmt_number(counts.get((day, hour), 0)) for hour in range(24)]]
            for day in range(1, 8)]
    if not any(counts.values()):
        return Chart(title, _empty_svg(title, 620), columns, [])
    left, top, cell, gap = 40, 18, 23, 2
    width, height = left + 24 * cell + 4, top + 7 * cell + 4
    peak = max(counts.values())
    parts = [_open_svg(title, width, height)]
    for hour in range(0, 24, 3):
        parts.append(f'<text class="axis" x="{left + hour * cell + cell / 2:.1f}" y="{top - 5}" '
                     f'text-anchor="middle">{hour:02d}</text>')
    for day in range(1, 8):
        y = top + (day - 1) * cell
        parts.append(f'<text class="axis" x="{left - 6}" y="{y + cell / 2 + 4:.1f}" text-anchor="end">'
                     f"{WEEKDAYS[day - 1]}</text>")
        for hour in range(24):
            count = counts.get((day, hour), 0)
            # Shades of the accent by the share of the busiest cell; an empty cell stays pale.
            opacity = 0.06 + 0.94 * (count / peak) if count else 0.03
            letters = ngettext("letter", "letters", count)
            label = f"{WEEKDAYS[day - 1]} {hour:02d}:00-{hour:02d}:59 UTC: {_fmt_number(count)} {letters}"
            parts.append(
                f'<a href="{escape(link(day, hour))}" aria-label="{escape(label)}">'
                f'<rect class="cell" x="{left + hour * cell}" y="{y}" width="{cell - gap}" height="{cell - gap}" '
                f'fill="{PALETTE[0]}" fill-opacity="{opacity:.2f}"><title>{escape(label)}</title></rect></a>'
            )
    parts.append("</svg>")
    return Chart(title, mark_safe("".join(parts)), columns, rows)


@dataclass
class Bar:
    """One row of a bar chart: a label, its values (one per series), and where it links."""

    label: str
    values: list[float | None]
    href: str = ""


def bar_chart(title: str, series: Sequence[str], bars: Sequence[Bar], *, unit: str = "",
              width: int = 620) -> Chart:
    """Horizontal bars, one group per label with a bar per series, sharing one axis from zero;
    each label links where its ``href`` says. A missing value draws no bar."""
    columns = ["", *series]
    rows = [[bar.label, *["" if v is None else _fmt_number(v) for v in bar.values]] for bar in bars]
    values = [v for bar in bars for v in bar.values if v is not None]
    if not values:
        return Chart(title, _empty_svg(title, width), columns, [])
    label_w, right, top, thick = 210, 60, 6, 9
    row_h = thick * len(series) + 8
    legend = 20 if len(series) > 1 else 0
    height = top + row_h * len(bars) + 18 + legend
    plot_w = width - label_w - right
    peak = _nice_ceiling(max(values))
    parts = [_open_svg(title, width, height)]
    for index, bar in enumerate(bars):
        y = top + index * row_h
        text = escape(_clip(bar.label, int((label_w - 10) / LEGEND_CHAR_WIDTH)))
        label = f'<text class="legend" x="{label_w - 8}" y="{y + row_h / 2 + 2:.1f}" text-anchor="end">{text}' \
                f"<title>{escape(bar.label)}</title></text>"
        parts.append(f'<a href="{escape(bar.href)}">{label}</a>' if bar.href else label)
        for position, value in enumerate(bar.values):
            if value is None:
                continue
            length = max(1.0, value / peak * plot_w)
            by = y + position * thick
            what = f"{bar.label}: {series[position]} {_fmt_number(value)}{unit}"
            parts.append(
                f'<rect x="{label_w}" y="{by}" width="{length:.1f}" height="{thick - 2}" '
                f'fill="{PALETTE[position % len(PALETTE)]}"><title>{escape(what)}</title></rect>'
                f'<text class="axis" x="{label_w + length + 4:.1f}" y="{by + thick - 2}">'
                f"{escape(_fmt_number(value))}</text>"
            )
    axis_y = top + row_h * len(bars) + 12
    for fraction in (0, 0.5, 1):
        parts.append(f'<text class="axis" x="{label_w + fraction * plot_w:.1f}" y="{axis_y}" text-anchor="middle">'
                     f"{escape(_fmt_number(peak * fraction))}{escape(unit)}</text>")
    for position, name in enumerate(series if legend else []):
        lx = label_w + position * 150
        colour = PALETTE[position % len(PALETTE)]
        parts.append(f'<rect x="{lx}" y="{axis_y + 8}" width="14" height="8" fill="{colour}"/>'
                     f'<text class="legend" x="{lx + 20}" y="{axis_y + 16}">{escape(name)}</text>')
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
        level = height - 2 - (values[0] / peak) * (height - 4)
        points = f"0,{level:.1f} {width},{level:.1f}"
    return mark_safe(
        f'<svg class="sparkline" role="img" aria-label="{escape(label)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(label)}</title>'
        f'<polyline points="{points}" fill="none" stroke="{PALETTE[0]}" stroke-width="1.5"/></svg>'
    )


def escape(text: str) -> str:
    """``text`` masked for the reader (the page's ``shown`` passes this SVG through as built by
    code, so what it embeds is masked here) and escaped for HTML."""
    return escape_html(shown(str(text)))


def _clip(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def _open_svg(title: str, width: int, height: int) -> str:
    return (
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    )


def _empty_svg(title: str, width: int, nothing: str = "No samples yet.") -> SafeString:
    height = 40
    return mark_safe(
        _open_svg(title, width, height)
        + f'<text class="axis" x="8" y="24">{escape(nothing)}</text></svg>'
    )
