"""The import page (admins): a JSON Lines export of another console, uploaded from a file, taken
into an imported place of a broker the admin picks (console.services.letter_import); the page
says how many letters went in and which lines were refused and why."""

from __future__ import annotations

from typing import Any

from django import forms
from django.shortcuts import render

from console.access.scope import visible
from console.models import Broker
from console.refusals import Refusal
from console.services.letter_import import do_import


class ImportForm(forms.Form):
    file = forms.FileField(help_text="A JSON Lines export (its first line says who exported what)")
    broker = forms.ModelChoiceField(queryset=Broker.objects.none(),
                                    help_text="The letters replay to their origins on this broker")
    place = forms.CharField(max_length=500, label="Place", help_text="The imported place's name (made when new)")
    reason = forms.CharField(max_length=2000, label="Reason (for the audit)")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        brokers: Any = self.fields["broker"]
        brokers.queryset = visible(user, Broker.objects.all())


def imports(request):
    """GET: the form. POST: the import, and what it did."""
    form = ImportForm(request.POST or None, request.FILES or None, user=request.user)
    result = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            result = do_import(upload, actor=request.user, broker=form.cleaned_data["broker"],
                               place_name=form.cleaned_data["place"], reason=form.cleaned_data["reason"],
                               file_name=upload.name)
        except Refusal as exc:
            form.add_error("file" if "export" in str(exc) else None, str(exc))
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "web/imports.html", {"form": form, "result": result}, status=status)
