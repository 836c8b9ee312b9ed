"""Which queues are dead places, from the management API's queues, exchanges and bindings.

Pure functions over the API's JSON, so the topology rules can be read and tested apart from
the wire. RabbitMQ has no "is a DLQ" flag; a queue is a dead place when

- some queue dead-letters into it: that queue's ``x-dead-letter-exchange`` (argument, or
  ``dead-letter-exchange`` in its effective policy; per key, the argument wins) is ``""`` and
  its dead-letter routing key names this queue (``discovered_by`` = ``argument`` or
  ``policy``, where the setting came from), or the DLX is an exchange that routes the
  dead-letter routing key (or, when none is set, the source queue's own binding keys) to this
  queue (``binding``);
- or its name follows a dead-letter convention (``convention``).

A queue that dead-letters its own expired messages back to a source queue is the delay of a
"retry through a TTL queue" loop, not a dead place, and is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from console.brokers.base import PlaceInfo

#: Name patterns of dead-letter queues that nothing in the topology points at.
CONVENTIONS = [
    re.compile(r"^(?P<base>.+)\.(dlq|DLQ)$"),
    re.compile(r"^(?P<base>.+)[-.]dead-letter$"),
    re.compile(r"^(?P<base>.+)[._]error$"),
    re.compile(r"^(dlq|DLQ)\.(?P<base>.+)$"),
]

#: Evidence for a dead place, strongest first.
STRENGTH = ["argument", "policy", "binding", "convention"]

#: Queue arguments worth showing with a place.
SHOWN_ARGUMENTS = (
    "x-queue-type", "x-dead-letter-exchange", "x-dead-letter-routing-key", "x-dead-letter-strategy",
    "x-delivery-limit", "x-message-ttl", "x-max-length", "x-max-length-bytes", "x-overflow", "x-expires",
)

Key = tuple[str, str]  # (vhost, name)


@dataclass
class DeadLetterSetting:
    """Where a queue sends its dead letters, and where each part of the setting came from."""

    exchange: str
    routing_key: str | None
    set_by: str  # argument or policy (of the exchange; the one that turns dead-lettering on)

    def as_dict(self) -> dict[str, Any]:
        return {"dead_letter_exchange": self.exchange, "dead_letter_routing_key": self.routing_key,
                "set_by": self.set_by}


@dataclass
class Topology:
    """The management API's view of a broker, indexed for routing questions."""

    queues: dict[Key, Mapping[str, Any]]
    exchange_types: dict[Key, str]
    bindings: list[Mapping[str, Any]]
    _by_destination: dict[Key, list[Mapping[str, Any]]] = field(default_factory=dict)
    _by_source: dict[Key, list[Mapping[str, Any]]] = field(default_factory=dict)

    @classmethod
    def from_api(cls, queues: Iterable[Mapping[str, Any]], exchanges: Iterable[Mapping[str, Any]],
                 bindings: Iterable[Mapping[str, Any]]) -> Topology:
        topology = cls(
            queues={(q["vhost"], q["name"]): q for q in queues},
            exchange_types={(x["vhost"], x["name"]): x.get("type", "direct") for x in exchanges},
            bindings=list(bindings),
        )
        for binding in topology.bindings:
            vhost = binding["vhost"]
            topology._by_source.setdefault((vhost, binding["source"]), []).append(binding)
            if binding.get("destination_type") == "queue":
                topology._by_destination.setdefault((vhost, binding["destination"]), []).append(binding)
        return topology

    def binding_keys(self, queue: Key) -> list[str]:
        """The routing keys that bring messages to a queue (its name, through the default exchange)."""
        keys = [b.get("routing_key", "") for b in self._by_destination.get(queue, [])]
        return list(dict.fromkeys(keys + [queue[1]]))

    def route(self, vhost: str, exchange: str, routing_keys: list[str],
              _seen: frozenset[Key] = frozenset()) -> set[str]:
        """Names of the queues ``exchange`` delivers to for these routing keys (headers and
        other plugin types: every bound queue, since their rules depend on the message)."""
        if exchange == "":
            return {key for key in routing_keys if (vhost, key) in self.queues}
        if (vhost, exchange) in _seen:
            return set()
        kind = self.exchange_types.get((vhost, exchange), "direct")
        found: set[str] = set()
        for binding in self._by_source.get((vhost, exchange), []):
            if not any(_binding_matches(kind, binding.get("routing_key", ""), key) for key in routing_keys):
                continue
            if binding.get("destination_type") == "queue":
                found.add(binding["destination"])
            else:  # exchange-to-exchange: the destination routes the same keys again
                found |= self.route(vhost, binding["destination"], routing_keys, _seen | {(vhost, exchange)})
        return found


def dead_letter_setting(queue: Mapping[str, Any]) -> DeadLetterSetting | None:
    """The queue's dead-letter exchange and routing key; per key, an argument beats the policy."""
    arguments = queue.get("arguments") or {}
    policy = queue.get("effective_policy_definition") or {}
    if not isinstance(policy, Mapping):  # the API gives [] when no policy applies
        policy = {}
    if "x-dead-letter-exchange" in arguments:
        exchange, set_by = arguments["x-dead-letter-exchange"], "argument"
    elif "dead-letter-exchange" in policy:
        exchange, set_by = policy["dead-letter-exchange"], "policy"
    else:
        return None
    routing_key = arguments.get("x-dead-letter-routing-key", policy.get("dead-letter-routing-key"))
    return DeadLetterSetting(str(exchange), None if routing_key is None else str(routing_key), set_by)


def has_own_ttl(queue: Mapping[str, Any]) -> bool:
    arguments = queue.get("arguments") or {}
    policy = queue.get("effective_policy_definition") or {}
    return "x-message-ttl" in arguments or (isinstance(policy, Mapping) and "message-ttl" in policy)


def dead_letter_targets(topology: Topology, key: Key) -> tuple[DeadLetterSetting | None, set[str]]:
    """Where the queue ``key``'s dead letters land, and through which setting."""
    setting = dead_letter_setting(topology.queues[key])
    if setting is None:
        return None, set()
    vhost, name = key
    if setting.routing_key is not None:
        keys = [setting.routing_key]
    elif setting.exchange == "":
        # Through the default exchange with the messages' own routing keys: unknowable here.
        return setting, set()
    else:
        keys = topology.binding_keys(key)
    return setting, topology.route(vhost, setting.exchange, keys) - {name}


def find_dead_places(topology: Topology) -> list[PlaceInfo]:
    """Every dead place in the topology, retry/delay queues left out, sorted by vhost and name."""
    feeds = _feeds(topology)
    retry = retry_queues(topology, feeds)
    places: dict[Key, PlaceInfo] = {}
    for key, sources in feeds.items():
        # A retry queue's expired messages going back to work are not dead letters.
        sources = {origin: s for origin, s in sources.items() if (key[0], origin) not in retry}
        if key in retry or not sources:
            continue
        evidence = min((_evidence(s) for s in sources.values()), key=STRENGTH.index)
        places[key] = _place(topology.queues[key], evidence, sorted(sources), sources)
    for key, queue in topology.queues.items():
        if key in places or key in retry or key in feeds:
            continue
        base = convention_base(key[1])
        if base is not None:
            origins = [base] if (key[0], base) in topology.queues else []
            places[key] = _place(queue, "convention", origins, {})
    return [places[key] for key in sorted(places)]


def retry_queues(topology: Topology, feeds: dict[Key, dict[str, DeadLetterSetting]] | None = None) -> set[Key]:
    """Queues with their own message TTL whose dead letters go back to a queue that feeds them
    (or to any other queue that dead-letters): the delays of retry loops."""
    feeds = _feeds(topology) if feeds is None else feeds
    sources = {key for key, queue in topology.queues.items() if dead_letter_setting(queue) is not None}
    found = set()
    for key, queue in topology.queues.items():
        if not has_own_ttl(queue):
            continue
        _, targets = dead_letter_targets(topology, key)
        back = {(key[0], target) for target in targets}
        feeders = {(key[0], origin) for origin in feeds.get(key, {})}
        if back & (feeders | (sources - {key})):
            found.add(key)
    return found


def _feeds(topology: Topology) -> dict[Key, dict[str, DeadLetterSetting]]:
    """Dead place -> {origin queue: the origin's dead-letter setting}."""
    feeds: dict[Key, dict[str, DeadLetterSetting]] = {}
    for key in topology.queues:
        setting, targets = dead_letter_targets(topology, key)
        if setting is None:
            continue
        for target in targets:
            feeds.setdefault((key[0], target), {})[key[1]] = setting
    return feeds


def convention_base(name: str) -> str | None:
    """The origin a conventional DLQ name points at (``orders.dlq`` -> ``orders``), else None."""
    for pattern in CONVENTIONS:
        match = pattern.match(name)
        if match:
            return match.group("base")
    return None


def _evidence(setting: DeadLetterSetting) -> str:
    return setting.set_by if setting.exchange == "" else "binding"


def _place(queue: Mapping[str, Any], discovered_by: str, origins: list[str],
           sources: Mapping[str, DeadLetterSetting]) -> PlaceInfo:
    arguments = queue.get("arguments") or {}
    details: dict[str, Any] = {
        "type": queue.get("type", "classic"),
        "durable": queue.get("durable"),
        "arguments": {k: arguments[k] for k in SHOWN_ARGUMENTS if k in arguments},
    }
    if queue.get("policy"):
        details["policy"] = queue["policy"]
    if sources:
        details["fed_by"] = {origin: setting.as_dict() for origin, setting in sorted(sources.items())}
    return PlaceInfo(
        name=queue["name"], scope=queue["vhost"], kind="queue", discovered_by=discovered_by, origins=origins,
        depth=queue.get("messages"), consumers=queue.get("consumers"),
        oldest_at=timestamp_seconds(queue.get("head_message_timestamp")), details=details,
    )


def timestamp_seconds(value: Any) -> datetime | None:
    """The management API gives message timestamps as AMQP seconds since the epoch."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return datetime.fromtimestamp(value, tz=UTC)
    return None


def _binding_matches(exchange_type: str, binding_key: str, routing_key: str) -> bool:
    if exchange_type == "direct":
        return binding_key == routing_key
    if exchange_type == "topic":
        return topic_matches(binding_key, routing_key)
    return True  # fanout, headers and plugin types: every bound queue may receive it


def topic_matches(pattern: str, routing_key: str) -> bool:
    """AMQP topic matching: words split on dots, ``*`` is one word, ``#`` zero or more."""
    return _match(pattern.split("."), routing_key.split("."))


def _match(pattern: list[str], words: list[str]) -> bool:
    if not pattern:
        return not words
    head, rest = pattern[0], pattern[1:]
    if head == "#":
        return any(_match(rest, words[i:]) for i in range(len(words) + 1))
    if not words:
        return False
    return (head == "*" or head == words[0]) and _match(rest, words[1:])
