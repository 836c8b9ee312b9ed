"""Saved views on the pages (console.services.saved_views): a view's own page (its letters as
the Letters page lists them, for the reader, to refine, tick and act on), saving the Letters
page's filter as a view, its owner's changes, and the navigation's menu of views with counts."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from console.access.redaction_policy import for_user
from console.access.roles import ROLES
from console.access.scope import scope_of
from console.models import SavedView
from console.notifications.kinds.base import NotifyError
from console.services.channels import MAX_DIGEST_MINUTES, do_subscribe_myself, do_unsubscribe_myself, my_subscription
from console.services.objectives import objectives_of_view
from console.services.parsing import ascii_whole_number
from console.services.saved_views import (
    ViewError,
    do_change_view,
    do_delete_view,
    do_save_view,
    kept_filter,
    may_change,
    quick_counts,
    readable_views,
    view_count,
    view_for,
)
from console.services.selection import SelectionError
from console.web.forms import FILTER_PREFIX, LetterFilterForm
from console.web.letter_lists import listing
from console.web.paging import sort_named

#: The hidden copy of a filter in the "save as a view" form: ``view-<key>`` (as the templates write it).
VIEW_PREFIX = "view-"


@require_GET
def saved_views_nav(request):
    """The navigation's menu of views (an htmx partial loaded when it opens), each with its count
    of the letters the reader may see: at once where the groups' counts answer it, else loaded
    after the menu (``saved_view_count``), so a menu of many views opens at once."""
    readable = list(readable_views(request.user))
    quick = quick_counts(readable, request.user)
    views = [(view, quick.get(view.pk)) for view in readable]
    return render(request, "web/partials/saved_views_nav.html", {"views": views})


@require_GET
def saved_view_count(request, view_id: int):
    """One view's count for the menu (an htmx partial), within its budget."""
    view = view_for(request.user, view_id)
    count, exact = view_count(view, request.user)
    return render(request, "web/partials/saved_view_count.html", {"count": count, "exact": exact})


def saved_view(request, view_id: int):
    """A view's page: its letters for the reader (a refinement in the query replaces the view's
    filter on this page only), and, for its owner, its change and delete forms."""
    view = view_for(request.user, view_id)
    if request.method == "POST":
        return _change(request, view)
    refined = any(key in request.GET for key in LetterFilterForm.base_fields)
    query = request.GET if refined else view.filter
    filters, _ = LetterFilterForm(query).filter_and_more()
    # The forms show the view's filter as the reader may read it: someone else typed it, and a
    # form's HTML (its hidden copies above all) is not masked on its way out.
    redactor = None if refined else for_user(request.user)
    shown = query if redactor is None else {key: redactor.text(str(value)) for key, value in query.items()}
    filter_form = LetterFilterForm(shown)
    shown_filters, more = filter_form.filter_and_more()
    return render(request, "web/saved_view.html", {
        "view": view, "yours": may_change(view, request.user), "roles": list(ROLES),
        "sharing_choices": SavedView.Sharing.choices, "refined": refined,
        "found": listing(request.user, filters, request.GET.get("after"), sort=sort_named(request.GET.get("sort"))),
        "filter_form": filter_form, "filters_active": bool(filters), "more_filters": more.items(),
        "hidden_filter": LetterFilterForm(initial=shown_filters, prefix=FILTER_PREFIX),
        "kept": kept_filter(query),
        # Its objectives: set here by people without limits (judged over every place).
        "objectives": objectives_of_view(request.user, view),
        "objective_action": reverse("view-objective-new", args=[view.pk]) if scope_of(request.user).unlimited else "",
        "mine": my_subscription(request.user, view),
    })


@require_POST
def saved_view_new(request):
    """Keep the filter posted with the form (the Letters page's, or a view's refined) as a view."""
    given = {key[len(VIEW_PREFIX):]: value for key, value in request.POST.items() if key.startswith(VIEW_PREFIX)}
    try:
        view = do_save_view(actor=request.user, name=request.POST.get("name", ""), filter=kept_filter(given),
                            description=request.POST.get("description", ""),
                            sharing=request.POST.get("sharing", SavedView.Sharing.PRIVATE),
                            role=request.POST.get("role", ""))
    except (ViewError, SelectionError) as exc:  # what the person typed; a refusal of the person is a 403
        messages.error(request, f"The view was not saved: {exc}")
        back = request.POST.get("back", "")
        safe = url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()})
        return redirect(back if back and safe else "letters")
    messages.success(request, f"Saved the view {view.name!r}.")
    return redirect("saved-view", view.pk)


def _change(request, view: SavedView):
    if request.POST.get("delete"):
        do_delete_view(view, actor=request.user)
        messages.success(request, f"Deleted the view {view.name!r}.")
        return redirect("letters")
    changes = {key: request.POST[key] for key in ("name", "description", "sharing", "role") if key in request.POST}
    if any(key.startswith(VIEW_PREFIX) for key in request.POST):
        changes["filter"] = kept_filter({key[len(VIEW_PREFIX):]: value for key, value in request.POST.items()
                                         if key.startswith(VIEW_PREFIX)})
    if not changes:  # a form asking for nothing changes nothing
        return redirect("saved-view", view.pk)
    try:
        do_change_view(view, actor=request.user, **changes)
    except (ViewError, SelectionError) as exc:
        messages.error(request, f"The view was not changed: {exc}")
    else:
        messages.success(request, f"Changed the view {view.name!r}.")
    return redirect("saved-view", view.pk)


@require_POST
def saved_view_subscription(request, view_id: int):
    """Hear of the view's new letters by e-mail (at once, or a digest every N minutes), or stop."""
    view = view_for(request.user, view_id)
    if request.POST.get("stop"):
        do_unsubscribe_myself(actor=request.user, view=view)
        messages.success(request, f"You no longer hear of the new letters of {view.name!r}.")
        return redirect(f"{reverse('saved-view', args=[view.pk])}#hear")
    digest = (request.POST.get("digest_minutes") or "").strip()
    try:
        minutes = ascii_whole_number(digest, 1, MAX_DIGEST_MINUTES) if digest else None
        if digest and minutes is None:
            raise NotifyError(f"a digest is every 1 to {MAX_DIGEST_MINUTES} minutes")
        do_subscribe_myself(actor=request.user, view=view, digest_minutes=minutes)
    except NotifyError as exc:  # what the person typed, or an account without an address
        messages.error(request, f"Not subscribed: {exc}")
    else:
        messages.success(request, f"You will hear of the new letters of {view.name!r} by e-mail.")
    return redirect(f"{reverse('saved-view', args=[view.pk])}#hear")
