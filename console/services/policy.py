"""An origin's effective policy in plain words: what its broker does with a message that keeps
failing (console.letters.policy, read live from the broker), then what the console's rules do
with the letter, e.g. "at most 20 deliveries, then orders.dlq; then rule 'card declined'
retries 3 × 1 min".

The broker's part stands alone; the rules' part is appended from (rule name, action in plain
words) pairs by ``with_rules``. ``rule_phrases`` is the seam where console.rules plugs in.

Both parts are built from what the reader may see (invariant 9): only rules the reader may see
are named (console.access.scope.visible), and of the dead places the broker sends the origin's
letters into, only those the reader may see; the others are said to be "places outside your
scope", with no name or count. One origin dying into places A and B reads, to a user limited to
A, "...then A and places outside your scope".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from console.access.actors import Actor
from console.access.scope import scope_of, visible
from console.brokers import BrokerError
from console.brokers.base import PlaceRef
from console.letters.policy import NOT_TOLD, DeliveryPolicy, describe
from console.models import DeadPlace, Origin, Rule
from console.services.rules import describe_action, enabled_rules

#: What the words say instead of the dead places a reader may not see.
UNSEEN_PLACES = "places outside your scope"

#: (rule name, what it does in plain words), e.g. ("card declined", "retries 3 × 1 min").
RulePhrase = tuple[str, str]


def rule_phrases(origin: Origin, reader: Actor) -> list[RulePhrase]:
    """The enabled rules that may act on this origin's letters and that ``reader`` may see, in
    the order they are tried, each as (name, action in plain words): rules over every place,
    over the origin's broker, or over a place its letters died into, that match on no origin or
    on this one. (What else a rule matches on, e.g. an exception type, applies letter by letter.)"""
    from console.models import DeadLetter

    places = set(DeadLetter.objects.filter(broker_id=origin.broker_id, origin_queue=origin.name)
                 .values_list("place_id", flat=True).distinct())
    rules = enabled_rules()
    seen = set(visible(reader, Rule.objects.filter(pk__in=[rule.pk for rule in rules])).values_list("pk", flat=True))
    phrases = []
    for rule in rules:
        if rule.pk not in seen:
            continue
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


def broker_policies(origins: Iterable[Origin], reader: Actor) -> dict[int, str]:
    """The broker's part for each origin, by origin id, naming only the dead places ``reader``
    may see: one adapter per broker; a broker that cannot be asked is said so, not guessed."""
    by_broker: dict[int, list[Origin]] = {}
    for origin in origins:
        by_broker.setdefault(origin.broker_id, []).append(origin)
    words: dict[int, str] = {}
    for group in by_broker.values():
        try:
            with group[0].broker.adapter() as adapter:
                told = adapter.delivery_policies([PlaceRef(origin.name, origin.scope) for origin in group])
            words.update((origin.pk, describe(as_seen_by(reader, origin, policy)))
                         for origin, policy in zip(group, told, strict=True))
        except BrokerError as exc:
            for origin in group:
                words.setdefault(origin.pk, f"{NOT_TOLD}: {exc.message}")
    return words


def as_seen_by(reader: Actor, origin: Origin, policy: DeliveryPolicy) -> DeliveryPolicy:
    """``policy`` with the dead places ``reader`` may not see left unnamed (fail closed: a
    place the console does not know is one they may not see)."""
    names = [name for name, _ in policy.dead_places]
    if scope_of(reader).unlimited or not names:
        return policy
    seen = set(visible(reader, DeadPlace.objects.filter(broker_id=origin.broker_id, name__in=names))
               .values_list("name", "scope"))
    shown = [name for name, scope in policy.dead_places if (name, scope) in seen]
    if len(shown) == len(names):
        return policy
    if policy.dead_place and policy.dead_place != " and ".join(names):
        return policy  # words that do not list the places (e.g. "a MAX_DELIVERIES advisory")
    return replace(policy, dead_place=" and ".join([*shown, UNSEEN_PLACES]),
                   dead_places=tuple(place for place in policy.dead_places if place[0] in shown))


def effective_policies(origins: Sequence[Origin], *, reader: Actor) -> dict[int, str]:
    """Each origin's whole policy in plain words, by origin id, as ``reader`` may read it."""
    broker_words = broker_policies(origins, reader)
    return {origin.pk: with_rules(broker_words[origin.pk], rule_phrases(origin, reader)) for origin in origins}
