"""An origin's effective policy in plain words: what its broker does with a message that keeps
failing (console.brokers.policy, read live from the broker), then what the console's rules do
with the letter, e.g. "at most 20 deliveries, then orders.dlq; then rule 'card declined'
retries 3 × 1 min".

The broker's part stands alone; the rules' part is appended from (rule name, action in plain
words) pairs by ``with_rules``. ``rule_phrases`` is the seam where console.rules plugs in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from console.brokers import BrokerError
from console.brokers.base import PlaceRef
from console.brokers.policy import NOT_TOLD, describe
from console.models import Origin
from console.services.rules import describe_action, enabled_rules

#: (rule name, what it does in plain words), e.g. ("card declined", "retries 3 × 1 min").
RulePhrase = tuple[str, str]


def rule_phrases(origin: Origin) -> list[RulePhrase]:
    """The enabled rules that may act on this origin's letters, in the order they are tried,
    each as (name, action in plain words): rules over every place, over the origin's broker, or
    over a place its letters died into, that match on no origin or on this one. (What else a
    rule matches on, e.g. an exception type, applies letter by letter.)"""
    from console.models import DeadLetter

    places = set(DeadLetter.objects.filter(broker_id=origin.broker_id, origin_queue=origin.name)
                 .values_list("place_id", flat=True).distinct())
    phrases = []
    for rule in enabled_rules():
        if rule.place_id is not None and rule.place_id not in places:
            continue
        if rule.broker_id is not None and rule.broker_id != origin.broker_id:
            continue
        if rule.match.get("origin") not in (None, origin.name):
            continue
        phrases.append((rule.name, describe_action(rule.action)))
    return phrases


def with_rules(broker_words: str, phrases: Sequence[RulePhrase]) -> str:
    """The broker's words followed by each rule's: "...; then rule 'x' retries 3 × 1 min"."""
    return "; ".join([broker_words, *(f"then rule '{name}' {action}" for name, action in phrases)])


def broker_policies(origins: Iterable[Origin]) -> dict[int, str]:
    """The broker's part for each origin, by origin id: one adapter per broker; a broker that
    cannot be asked is said so, not guessed."""
    by_broker: dict[int, list[Origin]] = {}
    for origin in origins:
        by_broker.setdefault(origin.broker_id, []).append(origin)
    words: dict[int, str] = {}
    for group in by_broker.values():
        try:
            with group[0].broker.adapter() as adapter:
                told = adapter.delivery_policies([PlaceRef(origin.name, origin.scope) for origin in group])
            words.update((origin.pk, describe(policy)) for origin, policy in zip(group, told))
        except BrokerError as exc:
            for origin in group:
                words.setdefault(origin.pk, f"{NOT_TOLD}: {exc.message}")
    return words


def effective_policies(origins: Sequence[Origin]) -> dict[int, str]:
    """Each origin's whole policy in plain words, by origin id."""
    broker_words = broker_policies(origins)
    return {origin.pk: with_rules(broker_words[origin.pk], rule_phrases(origin)) for origin in origins}
