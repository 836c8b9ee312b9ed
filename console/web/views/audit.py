"""The audit trail: newest first, filtered by actor, action, place, job, letter and time, and
exported as CSV or JSON (streamed in keyset chunks, so a large audit never sits in memory)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone

from console.access.redaction_policy import for_everyone, mask_events
from console.access.redactor import Redactor
from console.access.scope import visible
from console.exports.csv_file import cell
from console.models import AuditEvent, DeadPlace
from console.services.filtersets import AuditFilterSet
from console.web.paging import NEWEST, page_sorted

#: Events fetched per query while exporting.
EXPORT_CHUNK = 1000
#: A CSV cell starting with one of these is read as a formula by spreadsheets.
EXPORT_FIELDS = ["id", "at", "actor", "action", "reason", "ticket", "job", "broker", "place", "target",
                 "count", "letter_ids", "outcome", "details", "source_ip", "hash"]
#: Export fields made by code, left unmasked; every other one is masked (names people chose,
#: such as a rule's in its actor or a broker's, are as maskable as what they typed).
EXPORT_SAFE = {"id", "at", "job", "count", "letter_ids", "hash"}

def _events(request) -> tuple[forms.Form, QuerySet]:
    """The filter form and the events it selects among those the user may see (the page and
    both exports read the same). The filters are /api/audit/'s (AuditFilterSet); a value that
    does not parse is shown with its error and left out of the filter."""
    filterset = AuditFilterSet(request.GET, queryset=visible(request.user, AuditEvent.objects.all()))
    return filterset.form, filterset.qs


@login_required
def audit_list(request):
    form, events = _events(request)
    page = page_sorted(events, request.GET.get("before"), NEWEST)
    page.rows = mask_events(request.user, page.rows)  # details masked for viewers
    context = {
        "form": form,
        "page": page,
        "actions": visible(request.user, AuditEvent.objects.all()).order_by("action")
        .values_list("action", flat=True).distinct()[:100],
        "places": visible(request.user, DeadPlace.objects.all()).order_by("name")
        .values_list("name", flat=True).distinct()[:500],
        "query": request.GET.urlencode(),
    }
    return render(request, "web/audit.html", context)


def event_row(event: AuditEvent) -> dict[str, Any]:
    """One event as the exports write it."""
    return {
        "id": event.pk, "at": event.at.isoformat(), "actor": event.actor_name, "action": event.action,
        "reason": event.reason, "ticket": event.ticket, "job": event.job_id, "broker": event.broker_name,
        "place": event.place_name, "target": event.target, "count": event.count,
        "letter_ids": list(event.letter_ids), "outcome": event.outcome, "details": event.details,
        "source_ip": event.source_ip, "hash": event.hash,
    }


def masked_row(redactor: Redactor, event: AuditEvent) -> dict[str, Any]:
    """One event as the exports write it, every field not in EXPORT_SAFE masked."""
    return {name: value if name in EXPORT_SAFE else redactor.value(value) for name, value in event_row(event).items()}


def iter_events(events: QuerySet, chunk: int = EXPORT_CHUNK) -> Iterator[AuditEvent]:
    """Every event of ``events``, newest first, fetched ``chunk`` at a time by id (keyset)."""
    before = None
    while True:
        page = events.order_by("-id")
        if before is not None:
            page = page.filter(id__lt=before)
        rows = list(page[:chunk])
        yield from rows
        if len(rows) < chunk:
            return
        before = rows[-1].pk


def csv_cell(value: Any) -> str:
    """A cell a spreadsheet shows as text (console.exports.csv_file.cell); a list as its words."""
    return cell(" ".join(str(v) for v in value) if isinstance(value, list) else value)


class _Echo:
    """A file-like object whose write returns the line, for csv.writer in a generator."""

    def write(self, value: str) -> str:
        return value


def _download_name(extension: str) -> str:
    return f"audit-{timezone.now():%Y%m%d-%H%M%S}.{extension}"


@login_required
def audit_export_csv(request):
    _, events = _events(request)
    writer = csv.writer(_Echo())
    redactor = for_everyone()  # exports are redacted for everyone

    def lines() -> Iterator[str]:
        yield writer.writerow(EXPORT_FIELDS)
        for event in iter_events(events):
            row = masked_row(redactor, event)
            yield writer.writerow([csv_cell(row[field]) for field in EXPORT_FIELDS])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_download_name("csv")}"'
    return response


@login_required
def audit_export_json(request):
    _, events = _events(request)
    redactor = for_everyone()  # exports are redacted for everyone

    def chunks() -> Iterator[str]:
        yield "["
        for index, event in enumerate(iter_events(events)):
            row = json.dumps(masked_row(redactor, event), ensure_ascii=False, default=str)
            yield ("," if index else "") + "\n" + row
        yield "\n]\n"

    response = StreamingHttpResponse(chunks(), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{_download_name("json")}"'
    return response
