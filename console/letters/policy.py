"""What a broker says happens to a message that keeps failing in one origin, and the same in
plain words ("at most 20 deliveries, then orders.dlq").

Each adapter reads what its broker tells (``Adapter.delivery_policy``); what it does not tell
stays unknown and the words say so, rather than guess a default the site may have changed.
The words are the broker's part of an origin's effective policy; the console appends the
rules' part (console.services.policy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

NOT_TOLD = "not told by the broker"


@dataclass(frozen=True)
class RetryStep:
    """One step of a retry chain the broker runs: letters wait ``wait_seconds`` in ``via``
    (a delay queue whose expired messages go back to the origin)."""

    via: str
    wait_seconds: float | None


@dataclass(frozen=True)
class DeliveryPolicy:
    """An origin's delivery policy as its broker tells it.

    ``told`` is false when the broker says nothing (then only ``notes`` may explain why);
    ``max_deliveries`` None is "no limit the broker enforces"; ``backoff`` are the waits in
    seconds before each redelivery; ``dead_place`` where a letter goes once it is over (""
    when nowhere is set); ``retry_chain`` delay queues that send letters back to the origin;
    ``limit_by`` who enforces the limit when it is not the broker (e.g. the console's own
    threshold on Redis).

    ``dead_places`` are the dead places, as ``(name, scope)`` the way the console names places,
    that the broker's topology sends this origin's dead letters into. It is what decides where
    a user limited to places may publish (console.access.topology; invariant 11: content never
    widens rights), so an adapter lists only what its broker tells (or its naming convention
    fixes), never what a letter's headers say; it may be given even when nothing else is told."""

    told: bool = False
    max_deliveries: int | None = None
    backoff: tuple[float, ...] = ()
    dead_place: str = ""
    retry_chain: tuple[RetryStep, ...] = ()
    limit_by: str = ""
    dead_places: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def duration(seconds: float | None) -> str:
    """``90`` -> ``1.5 min``, ``60`` -> ``1 min``, ``0.5`` -> ``500 ms``."""
    if seconds is None:
        return "an unknown time"
    for unit, size in (("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size:
            value = seconds / size
            return f"{value:g} {unit}" if value != int(value) else f"{int(value)} {unit}"
    return f"{seconds * 1000:g} ms"


def _backoff(waits: tuple[float, ...]) -> str:
    if len(set(waits)) == 1:
        return f"{duration(waits[0])} apart"
    return "waiting " + ", ".join(duration(w) for w in waits)


def describe(policy: DeliveryPolicy) -> str:
    """The broker's part of an origin's policy in plain words, e.g. "at most 20 deliveries,
    then orders.dlq" or "no delivery limit; a rejected letter waits 1 min in orders.retry and
    comes back to the origin"."""
    if not policy.told:
        return "; ".join((NOT_TOLD, *policy.notes))
    if policy.max_deliveries is not None:
        limit = f"at most {policy.max_deliveries} deliveries"
        if policy.backoff:
            limit += f", {_backoff(policy.backoff)}"
        if policy.limit_by:
            limit += f" ({policy.limit_by})"
        end = f"then {policy.dead_place}" if policy.dead_place else ""
    else:
        limit = "no delivery limit"
        end = f"a rejected letter goes to {policy.dead_place}" if policy.dead_place else ""
    parts = [", ".join(p for p in (limit, end) if p)]
    if policy.retry_chain:
        waits = " or ".join(f"{duration(step.wait_seconds)} in {step.via}" for step in policy.retry_chain)
        parts.append(f"a rejected letter waits {waits} and comes back to the origin")
    elif not policy.dead_place:
        parts.append("a letter that dies is dropped (no dead-letter place is set)")
    return "; ".join((*parts, *policy.notes))
