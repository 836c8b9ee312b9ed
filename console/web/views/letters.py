"""One letter: envelope, headers, decoded x-death, body, lineage and its audit trail."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render

from console.models import AuditEvent, DeadLetter
from console.web.display import body_view, value_rows, x_death_rows


@login_required
def letter_detail(request, letter_id: int):
    letter = get_object_or_404(DeadLetter.objects.select_related("place", "broker", "parent"), pk=letter_id)
    context = {
        "letter": letter,
        "headers": value_rows(letter.headers),
        "properties": value_rows(letter.properties),
        "x_death": x_death_rows(letter.envelope_details, letter.headers),
        "body": body_view(letter.body_bytes),
        "returns": letter.returns.order_by("id"),
        "events": AuditEvent.objects.filter(letter_ids__contains=[letter.pk]).order_by("-id")[:200],
    }
    return render(request, "web/letter.html", context)


@login_required
def letter_body(request, letter_id: int):
    """The exact body bytes, as a download the browser never renders."""
    letter = get_object_or_404(DeadLetter, pk=letter_id)
    response = HttpResponse(letter.body_bytes, content_type="application/octet-stream")
    response["Content-Disposition"] = f'attachment; filename="letter-{letter.pk}.bin"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
