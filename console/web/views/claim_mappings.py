"""The groups-claim mapping page (admins): which role and limits each value of the identity
provider's groups claim gives at sign-in (console.access.claims). Changes go through
console.services.claim_mappings, which audits them and keeps a limited admin within their limits.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render

from console.access.claims import from_file, mapping_rules
from console.access.roles import ROLES, WITHHOLDABLE
from console.access.scope import visible
from console.models import Broker, DeadPlace
from console.services.claim_mappings import do_delete_mapping, do_set_mapping, visible_mappings


class MappingForm(forms.Form):
    group = forms.CharField(max_length=255, widget=forms.TextInput(attrs={"autocomplete": "off",
                                                                          "spellcheck": "false"}))
    role = forms.ChoiceField(choices=[(role, role) for role in ROLES])
    brokers = forms.ModelMultipleChoiceField(queryset=Broker.objects.none(), required=False)
    places = forms.ModelMultipleChoiceField(queryset=DeadPlace.objects.none(), required=False)
    withhold = forms.MultipleChoiceField(choices=[(right, right) for right in WITHHOLDABLE], required=False,
                                         widget=forms.CheckboxSelectMultiple, label="Withhold",
                                         help_text="Rights of the role they do not get (export_letters: exports)")
    note = forms.CharField(max_length=500, required=False)
    reason = forms.CharField(max_length=500, required=False)

    def __init__(self, *args, reader, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Only what the admin may see is offered (and accepted).
        brokers, places = self.fields["brokers"], self.fields["places"]
        assert isinstance(brokers, forms.ModelMultipleChoiceField)
        assert isinstance(places, forms.ModelMultipleChoiceField)
        brokers.queryset = visible(reader, Broker.objects.order_by("name"))
        places.queryset = visible(reader, DeadPlace.objects.select_related("broker").order_by("broker__name", "name"))


def claim_mappings(request):
    """GET: the mapping and a form to map a group. POST: map a group (its mapping replaced), or
    with ``delete`` set to a group, remove that group's mapping."""
    form = MappingForm(request.POST if request.method == "POST" and "delete" not in request.POST else None,
                       reader=request.user)
    if request.method == "POST" and "delete" in request.POST:
        group = request.POST["delete"]
        do_delete_mapping(group, actor=request.user, reason=request.POST.get("reason", "").strip())
        messages.success(request, f"The group {group} no longer gives a role.")
        return redirect("claim-mappings")
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        mapping = do_set_mapping(actor=request.user, group=data["group"], role=data["role"], brokers=data["brokers"],
                                 places=data["places"], withhold=data["withhold"], note=data["note"],
                                 reason=data["reason"])
        messages.success(request, f"The group {mapping.group} now gives {mapping.role}.")
        return redirect("claim-mappings")
    status = 400 if form.is_bound and form.errors else 200
    file_rules = mapping_rules() if from_file() else []
    return render(request, "web/claim_mappings.html", {
        "mappings": [] if file_rules else visible_mappings(request.user), "file_rules": file_rules,
        "from_file": from_file(), "form": form}, status=status)
