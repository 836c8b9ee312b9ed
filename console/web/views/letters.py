"""Letters: one letter in full (envelope, what its brokers wrote on it, headers, body, lineage,
audit trail, its actions, the edit form), its body as a download, edit-and-replay, and the
Letters page across places."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.access.redaction_policy import ShownContent, for_user, mask_envelopes, mask_events
from console.access.roles import ACT, ROLES, has
from console.access.scope import visible
from console.access.traces import shown_trace
from console.decoders.reading import readable, where_of, writes
from console.jobs.door.requests import request_job
from console.letters import compression
from console.letters.compression import Decoded
from console.models import AuditEvent, DeadLetter, LetterMark
from console.services.edit import EDITABLE_STATES, edit_diff
from console.services.flights import shown_state
from console.services.jobs import JobError
from console.services.marks import MarkError, do_mark_letter, do_unmark_letter
from console.services.parsing import ascii_whole_number
from console.services.rules import handling_of
from console.services.saved_views import kept_filter
from console.web.action_forms import EDITABLE_BODY_BYTES, EditLetterForm
from console.web.display import BodyView, body_view, letter_tables, value_rows
from console.web.forms import FILTER_PREFIX, LetterFilterForm
from console.web.letter_lists import listing
from console.web.paging import OLDEST, sort_named

#: A letters list by id shows at most this many ids from the query string.
MAX_LISTED_IDS = 1000


def _letter(letter_id: int) -> DeadLetter:
    return get_object_or_404(
        DeadLetter.objects.select_related("place", "broker", "parent", "last_job", "capture_job"), pk=letter_id
    )


def editable(letter: DeadLetter, compressed: Decoded | None = None) -> bool:
    """Whether the page offers edit-and-replay for this letter (``compressed``: how its body
    decoded, when it says it is compressed: the box holds the decoded body)."""
    size = len(compressed.body) if compressed is not None and compressed.body is not None else letter.body_size
    return (letter.state in EDITABLE_STATES and bool(letter.origin_queue) and not letter.body_erased
            and max(size, letter.body_size) <= EDITABLE_BODY_BYTES)


def _render_letter(request, letter: DeadLetter, edit_form: EditLetterForm | None = None):
    letter.state = shown_state(letter)  # for the page only, never saved: a letter in flight is replaying
    shown = ShownContent(request.user, letter)  # masked for viewers (console.access.redaction_policy)
    # A body in a format the console writes back (console.decoders) is edited as its value's JSON.
    if edit_form is None and editable(letter, shown.compression) and has(request.user, ACT):
        reading = writes(letter.body_bytes, letter.properties, letter.headers, where_of(letter))
        edit_form = EditLetterForm(initial=EditLetterForm.initial_for(letter.body_bytes, letter.headers,
                                                                      shown.compression, reading),
                                   compressed=shown.compression, reading=reading)
    # A return may have died in another place (after a move): shown only where the user may look.
    returns = list(visible(request.user, letter.returns.select_related("last_job")).order_by("id"))
    mask_envelopes(request.user, returns)
    context = {
        "handling": handling_of(letter),
        "mark": LetterMark.objects.select_related("owner").filter(letter_id=letter.pk).first(),
        "letter": letter,
        "headers": value_rows(shown.headers),
        "properties": value_rows(shown.properties),
        "envelope": shown.envelope,
        "trace": shown_trace(for_user(request.user), letter),
        "broker_tables": letter_tables(shown.envelope["envelope_details"], shown.headers),
        "body": body_view(shown.body) if shown.body is not None else BodyView("hidden", "", 0, letter.body_size),
        "masked": shown.masked,
        "compression": shown.compression,
        "reading": shown.reading,
        "edited_from": (letter.envelope_details or {}).get("edited_from"),
        "edited_copies": [r for r in returns if (r.envelope_details or {}).get("edited_from") == letter.pk],
        "returns": [r for r in returns if (r.envelope_details or {}).get("edited_from") != letter.pk],
        "events": mask_events(request.user, visible(request.user, AuditEvent.objects.filter(
            letter_ids__contains=[letter.pk])).order_by("-id")[:200]),
        "edit_form": edit_form,
        "edit_open": edit_form is not None and edit_form.is_bound,
        "edit_limit": EDITABLE_BODY_BYTES,
    }
    return render(request, "web/letter.html", context)


@login_required
def letter_detail(request, letter_id: int):
    return _render_letter(request, _letter(letter_id))


@login_required
@require_POST
def letter_edit(request, letter_id: int):
    """Replay an edited copy of the letter (console.services.edit), then show the replay job.
    As every action, it is previewed first (what changes, where the copy goes) and done once the
    preview's form, which posts the same fields again with ``confirmed``, is sent."""
    letter = _letter(letter_id)
    form = EditLetterForm(request.POST, original=letter.body_bytes,
                          compressed=compression.read(letter.body_bytes, letter.properties, letter.headers),
                          reading=writes(letter.body_bytes, letter.properties, letter.headers, where_of(letter)),
                          said=(letter.properties, letter.headers, where_of(letter)))
    if form.is_valid():
        data = form.cleaned_data
        if request.POST.get("confirmed") != "1":
            return _edit_preview(request, letter, form)
        try:
            job = request_job("edit_replay", letter=letter, body=data["body_bytes"], headers=data["headers"],
                              actor=request.user, reason=data["reason"], ticket=data["ticket"])
        except JobError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("job", job.pk)
    return _render_letter(request, letter, form)  # refused: the form again, open, with its errors


def _edit_preview(request, letter: DeadLetter, form: EditLetterForm):
    """What the edit changes and where its copy goes, with the confirm form (the same fields)."""
    data = form.cleaned_data
    before = readable(letter.body_bytes, letter.properties, letter.headers, where_of(letter))
    after = readable(data["body_bytes"], letter.properties, data["headers"], where_of(letter))
    return render(request, "web/edit_preview.html", {
        "letter": letter,
        "diff": edit_diff(letter.body_bytes, data["body_bytes"], letter.headers or {}, data["headers"],
                          read=(before, after)),
        "posted": [(name, request.POST.get(name, "")) for name in form.fields],
    })


@login_required
def letter_body(request, letter_id: int):
    """The exact body bytes, as a download the browser never renders."""
    letter = get_object_or_404(DeadLetter, pk=letter_id)
    response = HttpResponse(letter.body_bytes, content_type="application/octet-stream")
    response["Content-Disposition"] = f'attachment; filename="letter-{letter.pk}.bin"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _ids(raw: str) -> list[int]:
    numbers = {ascii_whole_number(part.strip()) for part in raw.split(",")}
    return sorted(number for number in numbers if number is not None)[:MAX_LISTED_IDS]


@login_required
def letter_list(request):
    """Letters across every place the user may see, in keyset pages: by the place page's filter
    (and the other keys of console.services.selection, which the analytics page links with:
    ``?weekday=1&hour=9``), to tick or select all and act on; or, to read, the letters named
    by id (``?ids=1,2,3``) or by an audit event (``?event=7``)."""
    after, event = request.GET.get("after"), None
    context: dict[str, object] = {}
    if (event_id := ascii_whole_number(request.GET.get("event", ""))) is not None:
        event = get_object_or_404(visible(request.user, AuditEvent.objects.all()), pk=event_id)
        found = listing(request.user, {}, after, DeadLetter.objects.filter(id__in=event.letter_ids), sort=OLDEST)
    elif "ids" in request.GET:
        found = listing(request.user, {}, after, DeadLetter.objects.filter(id__in=_ids(request.GET["ids"])),
                        sort=OLDEST)
    else:
        filter_form = LetterFilterForm(request.GET)
        filters, more = filter_form.filter_and_more()
        found = listing(request.user, filters, after, sort=sort_named(request.GET.get("sort")))
        context = {"filter_form": filter_form, "filters_active": bool(filters), "more_filters": more.items(),
                   "hidden_filter": LetterFilterForm(initial=filters, prefix=FILTER_PREFIX),
                   "preselect_all": request.GET.get("select_all") == "1",
                   # Saving the filter as a view (console.web.views.saved_views).
                   "kept": kept_filter(request.GET), "roles": list(ROLES)}
    return render(request, "web/letters.html", {"found": found, "event": event, **context})


@require_POST
def letter_mark(request, letter_id: int):
    """Mark the letter "investigating" (owner, ticket link), or take the mark away (audited)."""
    try:
        if request.POST.get("unmark"):
            do_unmark_letter(letter_id, actor=request.user)
            messages.success(request, f"Letter {letter_id} is no longer marked.")
        else:
            do_mark_letter(letter_id, actor=request.user, owner=request.POST.get("owner", ""),
                           ticket=request.POST.get("ticket", ""))
            messages.success(request, f"Letter {letter_id} is marked as investigating.")
    except MarkError as exc:
        messages.error(request, f"The mark was not saved: {exc}")
    return redirect("letter", letter_id)
