"""A failure group's page: what people decided (status, owner, tags), their notes, the
group's timeline (console.services.group_work: checked and audited), and its letters, to
filter, tick or select all and act on (the Letters page's preview across places)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access.redaction_policy import mask_envelopes
from console.access.scope import visible
from console.models import DeadLetter, GroupTriage
from console.services.group_traces import group_traces
from console.services.group_work import GroupError, do_add_note, do_update_group, notes, timeline
from console.services.groups import Among, failure_groups
from console.web.forms import FILTER_PREFIX, LetterFilterForm
from console.web.letter_lists import listing
from console.web.paging import sort_named


@login_required
def group_detail(request, fingerprint: str):
    groups = failure_groups({"fingerprint": fingerprint}, Among(request.user), limit=1)
    if not groups:
        raise Http404("no such failure group among the letters you may see")
    mask_envelopes(request.user, groups)
    row = GroupTriage.objects.select_related("owner").filter(fingerprint=fingerprint).first()
    filter_form = LetterFilterForm(request.GET)
    del filter_form.fields["fingerprint"]  # the group's own
    filters = filter_form.filter_values()
    letters = {**filters, "fingerprint": fingerprint}
    return render(request, "web/group.html", {
        "group": groups[0], "triage": row, "notes": notes(fingerprint, request.user),
        "traces": group_traces(fingerprint, request.user),
        "timeline": timeline(fingerprint, request.user), "status_choices": GroupTriage.Status.choices,
        "filter_form": filter_form, "filters_active": bool(filters),
        "found": listing(request.user, letters, request.GET.get("after"), sort=sort_named(request.GET.get("sort"))),
        "hidden_filter": LetterFilterForm(initial=letters, prefix=FILTER_PREFIX),
        "preselect_all": request.GET.get("select_all") == "1",
    })


@login_required
@require_POST
def group_change(request, fingerprint: str):
    if not visible(request.user, DeadLetter.objects.filter(fingerprint=fingerprint)).exists():
        raise Http404("no such failure group among the letters you may see")
    changes = {"status": request.POST.get("status", ""), "owner": request.POST.get("owner", "").strip() or None,
               "tags": [tag.strip() for tag in request.POST.get("tags", "").split(",") if tag.strip()]}
    if "ticket" in request.POST:
        changes["ticket"] = request.POST["ticket"]
    try:
        if request.POST.get("note", "").strip():
            do_add_note(fingerprint, actor=request.user, text=request.POST["note"])
        else:
            do_update_group(fingerprint, actor=request.user, reason=request.POST.get("reason", ""), **changes)
    except GroupError as exc:
        messages.error(request, str(exc))
    return redirect("group", fingerprint)
