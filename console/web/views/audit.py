"""The audit trail, newest first."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from console.models import AuditEvent
from console.web.forms import AuditFilterForm
from console.web.paging import page_before


@login_required
def audit_list(request):
    form = AuditFilterForm(request.GET)
    events = AuditEvent.objects.all()
    if form.is_valid():
        if form.cleaned_data["actor"]:
            events = events.filter(actor_name=form.cleaned_data["actor"])
        if form.cleaned_data["action"]:
            events = events.filter(action=form.cleaned_data["action"])
    page = page_before(events, request.GET.get("before"))
    return render(request, "web/audit.html", {"form": form, "page": page})
