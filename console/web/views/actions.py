"""Bulk actions on a place's letters: preview a frozen set, then confirm it into a job.

The place page's action form posts here. The preview freezes the letters the operator saw
(ticked ids, or the page's filter bounded by the highest letter id that exists now) and the
frozen set travels to the confirm step signed (django.core.signing), so the job acts on exactly
what the preview showed, however many letters arrive in between; the preview says how many did.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.db.models import BinaryField
from django.db.models.functions import Substr
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.access.redaction_policy import mask_previews
from console.access.roles import has
from console.access.scope import visible
from console.brokers import adapter_class
from console.brokers.values import PREVIEW_CHARS, body_preview
from console.jobs.door.requests import request_job
from console.jobs.kinds import JobKind, kind, offered
from console.jobs.kinds.base import ORIGIN, SELECTION, TARGET
from console.models import DeadLetter, DeadPlace
from console.services.jobs import JobError, preview_frozen
from console.services.selection import SelectionError, arrived_since, freeze
from console.web.action_forms import BulkActionForm, ConfirmForm
from console.web.forms import FILTER_PREFIX, LetterFilterForm

#: A preview can be confirmed for this long; after that the operator looks again.
TOKEN_MAX_AGE = 2 * 60 * 60
TOKEN_SALT = "dlo.web.bulk-action"
SAMPLE_SIZE = 10


def offered_actions(place: DeadPlace, user=None) -> list[JobKind]:
    """The kinds offered on a selection of the place's letters that its adapter supports (and
    ``user``'s role allows, when given), in the order the form lists them."""
    capabilities = adapter_class(place.broker.kind).capabilities()
    return [each for each in offered(SELECTION, capabilities) if user is None or has(user, each.permission)]


def move_targets(place: DeadPlace, user) -> list[str]:
    """Queue names to suggest for a move: the origins and dead places of the broker that
    ``user`` may see (a suggestion list must not name places outside their scope)."""
    names: set[str] = set()
    places = visible(user, DeadPlace.objects.filter(broker_id=place.broker_id))
    for name, origins in places.values_list("name", "origins"):
        names.add(name)
        names.update(o for o in origins or [] if isinstance(o, str))
    return sorted(names)[:200]


def _place(place_id: int) -> DeadPlace:
    return get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)


def _sign(request, place: DeadPlace, action: str, asked: dict[str, Any], selection: dict) -> str:
    payload = {"place": place.pk, "action": action, "asked": asked, "selection": selection,
               "user": request.user.pk}
    return signing.dumps(payload, salt=TOKEN_SALT, compress=True)


def _unsign(request, token: str) -> dict[str, Any] | None:
    """The frozen request behind a token, or None if it is forged, expired or someone else's."""
    try:
        payload = signing.loads(token, salt=TOKEN_SALT, max_age=TOKEN_MAX_AGE)
    except signing.BadSignature:  # includes SignatureExpired
        return None
    return payload if payload.get("user") == request.user.pk else None


def _back_to_place(place: DeadPlace, filters: dict[str, str]) -> str:
    shown = {k: v for k, v in filters.items() if k != "place"}
    url = reverse("place", args=[place.pk])
    return f"{url}?{urlencode(shown)}" if shown else url


@login_required
@require_POST
def action_preview(request, place_id: int):
    """Freeze the selection posted from the place page and show what the action would touch."""
    place = _place(place_id)
    form = BulkActionForm(request.POST, offered=offered_actions(place, request.user))
    filters = LetterFilterForm(request.POST, prefix=FILTER_PREFIX).filter_values()
    back = _back_to_place(place, filters)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
        return redirect(back)
    data = form.cleaned_data
    try:
        if data["select_all"]:
            selection = freeze(filter={**filters, "place": str(place.pk)})
        else:
            # Only letters of this place, whatever ids were posted.
            ids = list(place.letters.filter(id__in=data["ids"]).values_list("id", flat=True))
            selection = freeze(ids=ids)
    except SelectionError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    token = _sign(request, place, data["action"], data["asked"], selection)
    confirm = ConfirmForm(initial={"token": token, "reason": data["reason"], "ticket": data["ticket"]},
                          job_kind=kind(data["action"]), place_name=place.name)
    return _render_preview(request, place, kind(data["action"]), data["asked"], selection, confirm, token)


@login_required
@require_POST
def action_confirm(request):
    """Make the job on the frozen selection of a preview, then show the job."""
    token = request.POST.get("token", "")
    payload = _unsign(request, token)
    if payload is None:
        messages.error(request, "This preview has expired or is not valid: look at the letters again.")
        return redirect("inventory")
    place = _place(payload["place"])
    asked, selection = payload["asked"], payload["selection"]
    job_kind = next((each for each in offered_actions(place) if each.name == payload["action"]), None)
    if job_kind is None:
        messages.error(request, f"{place.broker.kind} cannot do {payload['action']!r} on a selection of letters.")
        return redirect("place", place.pk)
    form = ConfirmForm(request.POST, job_kind=job_kind, place_name=place.name)
    if form.is_valid():
        try:
            job = request_job(
                job_kind.name, actor=request.user, reason=form.cleaned_data["reason"],
                ticket=form.cleaned_data["ticket"], selection=selection, **asked, **form.asked(),
            )
        except JobError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("job", job.pk)
    # Refused: the same preview again, with the errors (200, like any form shown again).
    return _render_preview(request, place, job_kind, asked, selection, form, token)


@login_required
@require_GET
def arrived_since_preview(request):
    """(htmx) How many matching letters arrived after the preview froze its selection."""
    payload = _unsign(request, request.GET.get("token", ""))
    if payload is None:
        return render(request, "web/partials/arrived_since.html", {"arrived": None})
    return render(request, "web/partials/arrived_since.html",
                  {"arrived": arrived_since(payload["selection"], reader=request.user),
                   "token": request.GET["token"]})


def _render_preview(request, place: DeadPlace, job_kind: JobKind, asked: dict[str, Any], selection: dict,
                    confirm: ConfirmForm, token: str):
    try:
        summary = preview_frozen(selection, reader=request.user, sample=SAMPLE_SIZE)
    except JobError as exc:
        messages.error(request, str(exc))
        return redirect("place", place.pk)
    head = Substr("body", 1, PREVIEW_CHARS * 4, output_field=BinaryField())
    sample = list(DeadLetter.objects.filter(id__in=summary["sample"]).defer("body").annotate(body_head=head)
                  .order_by("id"))
    for letter in sample:
        letter.preview = body_preview(letter.body_head, letter.body_size)  # type: ignore[attr-defined]  # for the page
    mask_previews(request.user, sample)
    target = asked.get("target", "")
    origins = [
        {**row, "destination": _destination(job_kind, target, row["origin_queue"])} for row in summary["by_origin"]
    ]
    context = {
        "place": place,
        "job_kind": job_kind,
        "target": target if job_kind.publishes_to == TARGET else "",
        "summary": summary,
        "filters": {k: v for k, v in selection.get("filter", {}).items() if k != "place"},
        "origins": origins,
        "sample": sample,
        "form": confirm,
        "token": token,
        "back": _back_to_place(place, selection.get("filter", {})),
    }
    return render(request, "web/preview.html", context)


def _destination(job_kind: JobKind, target: str, origin: str) -> str:
    """Where the kind publishes a letter from ``origin``: "" where it publishes none."""
    return {ORIGIN: origin, TARGET: target}.get(job_kind.publishes_to, "")
