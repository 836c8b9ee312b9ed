"""The rules page: handling rules in order, a form for a new (draft) rule, each rule's dry run
(htmx, changes nothing), enabling or disabling it, and deleting it. Changes go through
console.services.rules, which checks them and audits."""

from __future__ import annotations

import json

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.access.scope import visible
from console.models import Broker, DeadPlace, Rule
from console.services.parsing import IntegerField, ascii_whole_number
from console.services.rules import (
    ACTIONS,
    PRESETS,
    THEN,
    RuleError,
    describe_action,
    do_create_rule,
    do_delete_rule,
    do_update_rule,
    dry_run,
)
from console.services.rules.matches import described


class RuleForm(forms.Form):
    name = forms.CharField(max_length=100)
    position = IntegerField(required=False, help_text="Lower goes first (default: after the last)")
    scope = forms.CharField(required=False, help_text="every place, a broker or a place")
    match = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
                            help_text='JSON, e.g. {"exception_type": "CardDeclined", "min_deaths": 2}')
    kind = forms.ChoiceField(choices=[(kind, kind.replace("_", " ")) for kind in ACTIONS])
    preset = forms.ChoiceField(required=False, choices=[("", "custom ladder"), *((p, p.upper()) for p in PRESETS)])
    ladder = forms.CharField(required=False, help_text="seconds × tries, e.g. 60x3, 120x3")
    then = forms.ChoiceField(required=False, initial="hold", choices=[(then, then.replace("_", " ")) for then in THEN])
    target = forms.CharField(required=False, max_length=500, help_text="queue to forward to")
    reason = forms.CharField(required=False, max_length=2000)

    def rule_input(self) -> dict:
        """What console.services.rules.do_create_rule takes; RuleError for what it cannot read."""
        data = self.cleaned_data
        try:
            match = json.loads(data["match"]) if data["match"].strip() else {}
        except ValueError as exc:
            raise RuleError(f"match is not JSON: {exc}") from None
        action: dict = {"kind": data["kind"]}
        if data["kind"] == "retry":
            action["then"] = data["then"] or "hold"
            if data["preset"]:
                action["preset"] = data["preset"]
            else:
                action["ladder"] = _ladder(data["ladder"])
        elif data["kind"] == "forward":
            action["target"] = data["target"]
        scope = {}
        if data["scope"].startswith(("broker:", "place:")):
            key, _, value = data["scope"].partition(":")
            number = ascii_whole_number(value)
            scope = {key: number} if number is not None else {}
        return {"name": data["name"], "position": data["position"], "scope": scope, "match": match,
                "action": action, "reason": data["reason"]}


def _ladder(text: str) -> list[dict]:
    steps = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        delay, sep, tries = part.lower().replace("×", "x").partition("x")
        seconds, times = ascii_whole_number(delay.strip().rstrip("s")), ascii_whole_number(tries.strip())
        if not sep or seconds is None or times is None:
            raise RuleError(f"a ladder step is seconds x tries, e.g. 60x3; got {part!r}")
        steps.append({"delay_seconds": seconds, "tries": times})
    return steps


@login_required
def rule_list(request):
    form = RuleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            rule = do_create_rule(actor=request.user, **form.rule_input())
        except RuleError as exc:
            messages.error(request, f"The rule was not saved: {exc}")
        else:
            messages.success(request, f"Rule {rule.name!r} saved as a draft: look at its dry run, then enable it.")
            return redirect("rules")
    rules = list(visible(request.user, Rule.objects.filter(deleted_at__isnull=True)).select_related(
        "enabled_by", "place__broker", "broker"))
    for rule in rules:
        rule.description = describe_action(rule.action)
        rule.match_json = json.dumps(rule.match, ensure_ascii=False)
    scopes = [("", "every place")]
    scopes += [(f"broker:{b.pk}", f"broker {b.name}") for b in visible(request.user, Broker.objects.all())]
    scopes += [(f"place:{p.pk}", f"place {p}")
               for p in visible(request.user, DeadPlace.objects.select_related("broker"))]
    match_kinds = [{**kind, "example_json": json.dumps({kind["key"]: kind["example"]}, ensure_ascii=False)}
                   for kind in described()]
    return render(request, "web/rules.html", {"rules": rules, "form": form, "scopes": scopes,
                                              "match_kinds": match_kinds})


@login_required
@require_POST
def rule_dry_run(request, rule_id: int):
    rule = get_object_or_404(visible(request.user, Rule.objects.filter(deleted_at__isnull=True)), pk=rule_id)
    return render(request, "web/partials/rule_dry_run.html",
                  {"rule": rule, "result": dry_run(rule, reader=request.user)})


@login_required
@require_POST
def rule_switch(request, rule_id: int):
    rule = get_object_or_404(visible(request.user, Rule.objects.filter(deleted_at__isnull=True)), pk=rule_id)
    enable = request.POST.get("enabled") == "on"
    try:
        do_update_rule(rule, actor=request.user, reason=request.POST.get("reason", ""), enabled=enable)
    except RuleError as exc:
        messages.error(request, f"Rule {rule.name!r}: {exc}")
    else:
        messages.success(request, f"Rule {rule.name!r} is {'enabled' if enable else 'disabled'}.")
    return redirect("rules")


@login_required
@require_POST
def rule_delete(request, rule_id: int):
    rule = get_object_or_404(visible(request.user, Rule.objects.filter(deleted_at__isnull=True)), pk=rule_id)
    try:
        do_delete_rule(rule, actor=request.user, reason=request.POST.get("reason", ""))
    except RuleError as exc:
        messages.error(request, f"Rule {rule.name!r}: {exc}")
    else:
        messages.success(request, f"Rule {rule.name!r} is deleted (its versions stay in the audit).")
    return redirect("rules")
