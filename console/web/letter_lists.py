"""A filtered list of letters as the pages show it: the matching count (capped), one keyset page
with body previews, masked for the reader. The place page, a failure group's page and the
Letters page across places list their letters through :func:`listing`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.db.models import BinaryField, QuerySet
from django.db.models.functions import Substr
from django.urls import reverse

from console.access.actors import Actor
from console.access.redaction_policy import for_user, mask_envelopes, mask_previews
from console.access.scope import visible
from console.access.traces import shown_traces
from console.exports import KINDS
from console.letters.values import PREVIEW_CHARS, body_preview
from console.models import DeadLetter
from console.services.selection import COUNT_CAP as LISTED_COUNT_CAP
from console.services.selection import SelectionError, capped_count, visible_matches
from console.web.paging import NEWEST, OLDEST, Page, Sort, page_key, page_sorted

#: Up to this many matching letters are counted exactly (console.services.selection.capped_count).
COUNT_CAP = LISTED_COUNT_CAP


@dataclass
class Listing:
    """What a page shows of the letters matching a filter."""

    page: Page | None  # None when the filter was refused
    matching: int = 0
    exact: bool = True
    #: A viewer's content filter confirmed only the first candidates: "at least".
    at_least: bool = False
    error: str = ""
    #: The order the page lists them in (oldest first, whatever was asked, when at_least).
    sort: Sort = NEWEST
    #: The same letters as files: (format's label, the export's URL), one per format.
    exports: list[tuple[str, str]] = field(default_factory=list)


def _with_body_head(letters: QuerySet[DeadLetter]) -> QuerySet[DeadLetter]:
    """The letters without their bodies, each with the head its preview is made of."""
    return letters.defer("body").annotate(body_head=Substr("body", 1, PREVIEW_CHARS * 4, output_field=BinaryField()))


def _previewed(reader: Actor, rows: list[DeadLetter]) -> None:
    """Each letter's body preview (``letter.preview``), previews and envelopes masked for the reader."""
    for letter in rows:
        letter.preview = body_preview(letter.body_head, letter.body_size)  # type: ignore[attr-defined]  # for the page
    mask_previews(reader, rows)
    mask_envelopes(reader, rows)


def with_previews(reader: Actor, letters: QuerySet[DeadLetter]) -> list[DeadLetter]:
    """``letters`` in id order, previewed and masked as a list shows them: a preview's sample."""
    rows: list[DeadLetter] = list(_with_body_head(letters).order_by("id"))
    _previewed(reader, rows)
    return rows


def listing(reader: Actor, params: dict[str, Any], after: str | None,
            queryset: QuerySet[DeadLetter] | None = None, sort: Sort = NEWEST) -> Listing:
    """The letters matching ``params`` (console.services.selection's keys) that ``reader`` may
    see, in ``sort``'s order, the page after ``after``, previews and envelopes masked for the
    reader."""
    letters = visible(reader, DeadLetter.objects.all() if queryset is None else queryset)
    try:
        # For a viewer, filters on content count only what the masked letters still show.
        counted = visible_matches(reader, params, letters)
        matching, exact = capped_count(counted.letters, COUNT_CAP)
        if not counted.complete:
            # Confirmed in id order, a few thousand candidates at a time: listed in that order.
            sort = OLDEST
        matches = (visible_matches(reader, params, letters, after=page_key(after))
                   if after and not counted.complete else counted)
    except SelectionError as exc:
        return Listing(page=None, error=str(exc))
    page = page_sorted(_with_body_head(matches.letters.select_related("place", "place__broker")), after, sort)
    if page.next_key is None and not matches.complete:
        page.next_key = matches.checked_to  # more candidates remain to be confirmed
    _previewed(reader, page.rows)
    traces = shown_traces(for_user(reader), page.rows)  # none where the reader's mask hides it
    for letter in page.rows:
        letter.trace = traces.get(letter.pk)
    return Listing(page=page, matching=matching, exact=exact, at_least=not counted.complete, sort=sort,
                   exports=export_links(params) if queryset is None else [])  # a filter alone says which


def export_links(params: dict[str, Any], url: str = "") -> list[tuple[str, str]]:
    """The export of the letters matching ``params`` in each format (console.exports), as links
    (to ``url``: the letters' export unless a job's or a group's)."""
    query = urlencode({key: _text(value) for key, value in params.items() if value not in ("", None)}, doseq=True)
    url = url or reverse("api-letters-export")
    return [(KINDS.get(name).label, f"{url}?format={name}" + (f"&{query}" if query else "")) for name in KINDS]


def _text(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_text(item) for item in value]
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
