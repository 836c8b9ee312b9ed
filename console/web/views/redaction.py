"""The redaction rules page (admins): list, add, switch on or off, and delete rules.

Changes go through console.services.redaction, which checks the pattern and audits.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.access.redactor import RuleError
from console.models import RedactionRule
from console.services.parsing import ascii_whole_number
from console.services.redaction import do_delete_redaction_rule, do_set_redaction_rule


class RedactionRuleForm(forms.Form):
    kind = forms.ChoiceField(choices=RedactionRule.Kind.choices)
    pattern = forms.CharField(max_length=500,
                              widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}))
    note = forms.CharField(max_length=200, required=False)
    enabled = forms.BooleanField(required=False, initial=True)


def redaction_rules(request):
    """GET: the rules and a form to add one. POST: add one (``rule`` set: change that one)."""
    form = RedactionRuleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        rule = None
        if (rule_id := ascii_whole_number(request.POST.get("rule", ""))) is not None:
            rule = get_object_or_404(RedactionRule, pk=rule_id)
        try:
            saved = do_set_redaction_rule(actor=request.user, rule=rule, **form.cleaned_data)
        except RuleError as exc:
            form.add_error("pattern", str(exc))
        else:
            messages.success(request, f"Saved the rule {saved}.")
            return redirect("redaction")
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "web/redaction.html", {"rules": RedactionRule.objects.all(), "form": form},
                  status=status)


@require_POST
def redaction_rule_delete(request, rule_id: int):
    rule = get_object_or_404(RedactionRule, pk=rule_id)
    do_delete_redaction_rule(rule, actor=request.user)
    messages.success(request, f"Deleted the rule {rule.kind}: {rule.pattern}.")
    return redirect("redaction")
