"""A rule that cannot do what it decided says so: its ``last_error`` (the Rules page and the API
show it) and one ``rule.failed`` notification, raised when it starts failing and not again until
it has recovered (a round in which it acts without a refusal clears ``last_error``)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from console.models import DeadPlace, Rule
from console.notifications.events import notify


def rule_failed(rule: Rule, error: str) -> None:
    """Note why ``rule`` failed now; tell of it if it was not failing already."""
    text = f"{timezone.now():%Y-%m-%d %H:%M:%S} {error}"[:2000]
    with transaction.atomic():
        started = Rule.objects.filter(pk=rule.pk, last_error="").update(last_error=text)
        if not started:
            Rule.objects.filter(pk=rule.pk).update(last_error=text)
            return
        place = (DeadPlace.objects.select_related("broker").filter(pk=rule.place_id).first()
                 if rule.place_id is not None else None)
        notify("rule.failed", key=f"rule:{rule.pk}:failed", place=place,
               subject=f"rule {rule.name!r} v{rule.version} fails: {error}"[:500],
               details={"rule": rule.name, "version": rule.version, "error": error})


def rule_recovered(rule: Rule) -> None:
    """Clear the rule's ``last_error`` (it may tell of a failure again after this)."""
    Rule.objects.filter(pk=rule.pk).exclude(last_error="").update(last_error="")
