"""Which letters a rule matches, and which letters any rule may look at now (held, not held for a
person, not in a rule's unfinished job)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from console.brokers import bounded_json
from console.models import DeadLetter, LetterState, Rule
from console.services.rules.spec import path_steps
from console.services.selection import filter_letters


def in_rule_scope(rule: Rule, letters: QuerySet) -> QuerySet:
    if rule.place_id is not None:
        return letters.filter(place_id=rule.place_id)
    if rule.broker_id is not None:
        return letters.filter(broker_id=rule.broker_id)
    return letters


def matching(rule: Rule, letters: QuerySet) -> list[int]:
    """Ids of ``letters`` (in the rule's scope) that its ``match`` takes, in id order."""
    match = rule.match or {}
    qs = in_rule_scope(rule, letters)
    if "origin" in match:
        qs = filter_letters({"origin": match["origin"]}, qs)
    if "reason" in match:
        qs = qs.filter(reason=match["reason"])
    if "exception_type" in match:
        qs = qs.filter(exception_type__regex=match["exception_type"])
    if "exception_message" in match:
        qs = qs.filter(exception_message__regex=match["exception_message"])
    if "header" in match:
        qs = filter_letters({"header": match["header"]["name"], "header_value": match["header"]["value"]}, qs)
    if "min_deaths" in match:
        qs = qs.filter(death_count__gte=match["min_deaths"])
    if "min_replays" in match:
        qs = qs.filter(replay_count__gte=match["min_replays"])
    if "older_than_seconds" in match:
        qs = qs.filter(captured_at__lte=timezone.now() - timedelta(seconds=match["older_than_seconds"]))
    if "max_size" in match:
        qs = qs.filter(body_size__lte=match["max_size"])
    if "body_path" not in match:
        return list(qs.order_by("id").values_list("id", flat=True))
    steps, wanted = path_steps(match["body_path"]["path"]), match["body_path"]["value"]
    return [letter_id for letter_id, body in qs.order_by("id").values_list("id", "body").iterator(chunk_size=500)
            if _at_path(bytes(body), steps, wanted)]


def _at_path(body: bytes, steps: list[str | int], wanted: Any) -> bool:
    try:
        value = bounded_json.loads(body)  # content is hostile: bounded in depth and size
    except (ValueError, RecursionError):
        return False
    for step in steps:
        if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(value, dict) and str(step) in value:
            value = value[str(step)]
        else:
            return False
    return value == wanted or (isinstance(wanted, str) and not isinstance(value, (dict, list)) and str(value) == wanted)


def handled_elsewhere() -> Q:
    """Letters no rule looks at now: held for a person by a rule, or in a rule's unfinished job."""
    from console.models import Job

    return Q(handling__held=True) | (Q(handling__job__isnull=False) & ~Q(handling__job__status__in=Job.FINISHED))


def open_letters(letters: QuerySet | None = None) -> QuerySet:
    """Held letters a rule may act on now."""
    qs = DeadLetter.objects.all() if letters is None else letters
    return qs.filter(state=LetterState.HELD).exclude(handled_elsewhere())


def enabled_rules() -> list[Rule]:
    return list(Rule.objects.filter(enabled=True, deleted_at__isnull=True).order_by("position", "id"))
