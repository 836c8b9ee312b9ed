"""Bulk actions on letters: preview a frozen set, then confirm it into a job.

The action forms of a place's page and of a letter's page post to the place's preview; those
of a failure group's page and of the Letters page (across the places the reader may see) to
the preview across places. The preview freezes the letters the operator saw
(ticked ids, or the page's filter bounded by the highest letter id that exists now) and the
frozen set travels to the confirm step signed (django.core.signing), so the job acts on exactly
what the preview showed, however many letters arrive in between; the preview says how many did.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.access.roles import has
from console.access.scope import scope_of, visible
from console.brokers import adapter_class
from console.jobs.door.requests import request_job
from console.jobs.kinds import JobKind, kind, offered
from console.jobs.kinds.base import ORIGIN, SELECTION, TARGET
from console.models import Broker, DeadLetter, DeadPlace
from console.services.jobs import JobError, preview_frozen
from console.services.parsing import ascii_whole_number
from console.services.selection import (
    SelectionError,
    arrived_since,
    clean_filter,
    freeze,
    resolve,
    visible_matches,
)
from console.web.action_forms import BulkActionForm, ConfirmForm
from console.web.forms import FILTER_PREFIX, LetterFilterForm
from console.web.letter_lists import COUNT_CAP, with_previews

#: A preview can be confirmed for this long; after that the operator looks again.
TOKEN_MAX_AGE = 2 * 60 * 60
TOKEN_SALT = "dlo.web.bulk-action"
SAMPLE_SIZE = 10


def offered_actions(place: DeadPlace, user=None) -> list[JobKind]:
    """The kinds offered on a selection of the place's letters that its adapter supports (and
    ``user``'s role allows, when given), in the order the form lists them. While the broker is
    known not to answer, none that publishes (replay, move): the page says why instead."""
    capabilities = adapter_class(place.broker.kind).capabilities()
    down = place.broker.reachable is False
    return [each for each in offered(SELECTION, capabilities)
            if (user is None or has(user, each.permission)) and not (down and each.publishes_to)]


def offered_across(places: QuerySet[DeadPlace], user=None) -> list[JobKind]:
    """The kinds offered on a selection that the adapter of every one of ``places`` supports
    (and ``user``'s role allows, when given)."""
    kinds = {kind_name for (kind_name,) in places.order_by().values_list("broker__kind").distinct()}
    every = [adapter_class(kind_name).capabilities() for kind_name in sorted(kinds)]
    return [each for each in offered(SELECTION) if (user is None or has(user, each.permission))
            and all(each.offered(SELECTION, capabilities) for capabilities in every)]


def move_targets(place: DeadPlace | None, user) -> list[str]:
    """Queue names to suggest for a move: the origins and dead places of the broker (of every
    broker, across places) that ``user`` may see (a suggestion list must not name places
    outside their scope)."""
    names: set[str] = set()
    places = visible(user, DeadPlace.objects.all() if place is None else
                     DeadPlace.objects.filter(broker_id=place.broker_id))
    for name, origins in places.values_list("name", "origins"):
        names.add(name)
        names.update(o for o in origins or [] if isinstance(o, str))
    return sorted(names)[:200]


def _place(place_id: int) -> DeadPlace:
    return get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)


def _sign(request, place: DeadPlace | None, action: str, asked: dict[str, Any], selection: dict,
          letter: int | None) -> str:
    payload = {"place": place.pk if place is not None else None, "action": action, "asked": asked,
               "selection": selection, "user": request.user.pk, "letter": letter}
    return signing.dumps(payload, salt=TOKEN_SALT, compress=True)


def _unsign(request, token: str) -> dict[str, Any] | None:
    """The frozen request behind a token, or None if it is forged, expired or someone else's."""
    try:
        payload = signing.loads(token, salt=TOKEN_SALT, max_age=TOKEN_MAX_AGE)
    except signing.BadSignature:  # includes SignatureExpired
        return None
    return payload if payload.get("user") == request.user.pk else None


def _back(place: DeadPlace | None, selection: dict[str, Any], letter: int | None = None) -> str:
    """Where the letters were looked at: the ``letter``'s page (its own actions), the place's
    page with its filter, or the Letters page across places with it."""
    if letter is not None:
        return reverse("letter", args=[letter])
    filters = selection.get("filter", {})
    shown = {k: v for k, v in filters.items() if k != "place" or place is None}
    url = reverse("place", args=[place.pk]) if place is not None else reverse("letters")
    return f"{url}?{urlencode(shown)}" if shown else url


def _posted_filter(request) -> dict[str, str]:
    """The filter's hidden copy in an action form: the filter form's fields, and on the Letters
    page the other keys of a selection it was opened with (an analytics link's weekday...)."""
    prefix = f"{FILTER_PREFIX}-"
    form = LetterFilterForm(request.POST, prefix=FILTER_PREFIX)
    more = clean_filter({key[len(prefix):]: value for key, value in request.POST.items()
                         if key.startswith(prefix) and key[len(prefix):] not in form.fields})
    return {**more, **form.filter_values()}


def _refused(request, form: BulkActionForm, back: str):
    for errors in form.errors.values():
        for error in errors:
            messages.error(request, str(error))
    return redirect(back)


def _previewed(request, place: DeadPlace | None, data: dict[str, Any], selection: dict, letter: int | None = None):
    """The preview of a frozen selection, with the confirm form under it (``letter``: asked on
    that letter's page, for it alone)."""
    token = _sign(request, place, data["action"], data["asked"], selection, letter)
    confirm = ConfirmForm(initial={"token": token, "reason": data["reason"], "ticket": data["ticket"]},
                          job_kind=kind(data["action"]), place_name=_name_to_type(place))
    return _render_preview(request, place, kind(data["action"]), data["asked"], selection, confirm, token, letter)


def _name_to_type(place: DeadPlace | None) -> str:
    """What a kind that cannot be undone asks to be typed: the place's name, or across places
    the word "purge" (there is no one name to type)."""
    return place.name if place is not None else "purge"


@login_required
@require_POST
def action_preview(request, place_id: int):
    """Freeze the selection posted from the place page and show what the action would touch."""
    place = _place(place_id)
    form = BulkActionForm(request.POST, offered=offered_actions(place, request.user))
    filters = _posted_filter(request)
    letter = ascii_whole_number(request.POST.get("letter", ""))  # asked on that letter's page
    back = _back(place, {"filter": filters}, letter)
    if not form.is_valid():
        return _refused(request, form, back)
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
    return _previewed(request, place, data, selection, letter if selection.get("ids") == [letter] else None)


@login_required
@require_POST
def letters_preview(request):
    """Freeze the selection posted from a page across places (a failure group's, the Letters
    page) and show what the action would touch. Only letters the reader may see: for a reader
    limited to some places, all matching are frozen as the ids of the matching letters they
    see (a filter alone would reach into places outside their scope)."""
    letters = visible(request.user, DeadLetter.objects.all())
    places = visible(request.user, DeadPlace.objects.all())
    form = BulkActionForm(request.POST, offered=offered_across(places, request.user))
    filters = _posted_filter(request)
    back = _back(None, {"filter": filters})
    if not form.is_valid():
        return _refused(request, form, back)
    data = form.cleaned_data
    try:
        if not data["select_all"]:
            selection = freeze(ids=list(letters.filter(id__in=data["ids"]).values_list("id", flat=True)))
        elif scope_of(request.user).unlimited:
            selection = freeze(filter=filters)
        else:
            matching = visible_matches(request.user, filters, letters).letters
            ids = list(matching.order_by("id").values_list("id", flat=True)[: COUNT_CAP + 1])
            if len(ids) > COUNT_CAP:
                raise SelectionError(f"more than {COUNT_CAP} letters match: narrow the filter to act on all of them")
            selection = freeze(ids=ids)
    except SelectionError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    if data["action"] not in {each.name for each in _kinds_for(None, selection, request.user)}:
        messages.error(request, f"{data['action']!r} cannot be done on letters of every broker selected: "
                                "narrow the selection to one broker.")
        return redirect(back)
    return _previewed(request, None, data, selection)


def _kinds_for(place: DeadPlace | None, selection: dict[str, Any], user=None) -> list[JobKind]:
    """The kinds offered on a frozen selection: the place's, or across places those that the
    adapter of every place holding its letters supports."""
    if place is not None:
        return offered_actions(place, user)
    return offered_across(DeadPlace.objects.filter(pk__in=resolve(selection).order_by().values("place_id")), user)


@login_required
@require_POST
def action_confirm(request):
    """Make the job on the frozen selection of a preview, then show the job."""
    token = request.POST.get("token", "")
    payload = _unsign(request, token)
    if payload is None:
        messages.error(request, "This preview has expired or is not valid: look at the letters again.")
        return redirect("inventory")
    place = _place(payload["place"]) if payload["place"] is not None else None
    asked, selection = payload["asked"], payload["selection"]
    job_kind = next((each for each in _kinds_for(place, selection) if each.name == payload["action"]), None)
    if job_kind is None:
        where = place.broker.kind if place is not None else "The brokers of these letters"
        messages.error(request, f"{where} cannot do {payload['action']!r} on a selection of letters.")
        return redirect(_back(place, selection, payload.get("letter")))
    form = ConfirmForm(request.POST, job_kind=job_kind, place_name=_name_to_type(place))
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
    return _render_preview(request, place, job_kind, asked, selection, form, token, payload.get("letter"))


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


def _render_preview(request, place: DeadPlace | None, job_kind: JobKind, asked: dict[str, Any], selection: dict,
                    confirm: ConfirmForm, token: str, from_letter: int | None = None):
    try:
        summary = preview_frozen(selection, reader=request.user, sample=SAMPLE_SIZE)
    except JobError as exc:
        messages.error(request, str(exc))
        return redirect(_back(place, selection, from_letter))
    sample = with_previews(request.user, DeadLetter.objects.filter(id__in=summary["sample"]))
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
        # The brokers the letters go to, when the kind publishes (the preview warns of several).
        "brokers": sorted({row["broker__name"] for row in origins}),
        "brokers_down": sorted(Broker.objects.filter(name__in={row["broker__name"] for row in origins},
                                                     reachable=False).values_list("name", flat=True)),
        "sample": sample,
        "approval_note": _approval_note(job_kind, summary["count"]),
        "form": confirm,
        "token": token,
        "back": _back(place, selection, from_letter),
    }
    return render(request, "web/preview.html", context)


def _approval_note(job_kind: JobKind, count: int) -> str:
    """Whether the job will wait for a second person (console.jobs.door.approvals.needs_approval
    decides when it is made; earlier jobs of the requester's window may add to the count)."""
    if job_kind.always_approved:
        return (f"A {job_kind.label.lower() or job_kind.name} always waits for a second person to approve it "
                "before it runs.")
    if count > settings.DLO_APPROVAL_THRESHOLD:
        return (f"It touches more than {settings.DLO_APPROVAL_THRESHOLD} letters: it will wait for a second person "
                "to approve it before it runs.")
    return ""


def _destination(job_kind: JobKind, target: str, origin: str) -> str:
    """Where the kind publishes a letter from ``origin``: "" where it publishes none."""
    return {ORIGIN: origin, TARGET: target}.get(job_kind.publishes_to, "")
