"""Whole-queue moves done by RabbitMQ itself: a dynamic shovel, through the management API.

A dynamic shovel is a runtime parameter (``/api/parameters/shovel/{vhost}/{name}``); RabbitMQ
starts it when the parameter appears and stops it when it goes. The console's shovels:

- connect with the ``amqp:///{vhost}`` URI, RabbitMQ's direct connection inside the cluster as
  the user who declared the parameter, so no password is written into the broker's parameters;
- acknowledge a message in the source only once the destination confirmed it
  (``ack-mode: on-confirm``), with at most ``PREFETCH`` unacknowledged at a time: a broker
  restart or a lost connection makes the shovel send those again (it delivers at least once),
  so the destination may gain up to that many copies;
- remove themselves after a given number of messages (``src-delete-after: <count>``), the count
  the caller read just before. ``queue-length`` would move whatever the queue holds when the
  shovel gets round to reading it, so dead letters arriving in between would be moved too and
  the caller's counts could no longer prove the move.

Measured on RabbitMQ 3.10: a ``dest-queue`` that does not exist is declared by the shovel (a
durable classic queue without arguments), so a mistyped destination would silently become a
new queue: callers check the destination exists first. A shovel whose publishes are refused
(say the destination is full with ``x-overflow: reject-publish``) puts the refused messages back
in the source, yet still counts them towards ``src-delete-after`` and removes itself having
moved fewer than asked: only counting afterwards tells.
"""

from __future__ import annotations

from typing import Any

from console.brokers.base import BrokerError, ServerMove
from console.brokers.rabbitmq.management import ManagementAPI, quoted

#: Messages a shovel takes from its source before their acknowledgements (RabbitMQ's default).
PREFETCH = 1000


def parameter_path(vhost: str, name: str) -> str:
    return f"/api/parameters/shovel/{quoted(vhost)}/{quoted(name)}"


def definition(vhost: str, source: str, destination: str, count: int) -> dict[str, Any]:
    """The shovel's parameter value: on-confirm, removing itself after ``count`` messages."""
    local = f"amqp:///{quoted(vhost)}"
    return {
        "src-protocol": "amqp091", "src-uri": local, "src-queue": source,
        "dest-protocol": "amqp091", "dest-uri": local, "dest-queue": destination,
        "ack-mode": "on-confirm", "src-prefetch-count": PREFETCH, "src-delete-after": count,
    }


def find_shovel(api: ManagementAPI, vhost: str, name: str) -> ServerMove | None:
    """The shovel as its parameter and the shovel status report describe it; None once gone."""
    parameter = api.find(parameter_path(vhost, name))
    if parameter is None:
        return None
    value = parameter.get("value") or {}
    count = value.get("src-delete-after")
    prefetch = value.get("src-prefetch-count")
    move = ServerMove(name=name, source=str(value.get("src-queue", "")), destination=str(value.get("dest-queue", "")),
                      count=count if isinstance(count, int) else None, state="starting",
                      resend_window=prefetch if isinstance(prefetch, int) else PREFETCH)
    # The status report lists a shovel a moment after its parameter appears, and not at all
    # once it has removed itself; until it does, "starting" is the truth.
    for row in api.find(f"/api/shovels/{quoted(vhost)}") or []:
        if row.get("name") == name and row.get("vhost", vhost) == vhost:
            move.state = str(row.get("state", "starting"))
            move.details = {key: row[key] for key in ("reason", "node", "timestamp", "blocked_status") if key in row}
    return move


def start_shovel(api: ManagementAPI, vhost: str, source: str, destination: str, *, name: str,
                 count: int) -> ServerMove:
    """Declare the shovel, unless one of that name is already there (then it is returned, as
    long as it moves the same queues: writing the parameter again would restart it)."""
    if count < 1:
        raise BrokerError("a shovel must move at least one message", permanent=True)
    existing = find_shovel(api, vhost, name)
    if existing is not None:
        if (existing.source, existing.destination) != (source, destination):
            raise BrokerError(f"a shovel named {name!r} on vhost {vhost!r} already moves {existing.source!r} "
                              f"to {existing.destination!r}, not {source!r} to {destination!r}", permanent=True)
        return existing
    try:
        api.put(parameter_path(vhost, name), {"value": definition(vhost, source, destination, count)})
    except BrokerError as exc:
        if not exc.permanent:
            raise
        raise BrokerError(f"{exc.message} (declaring a shovel needs the rabbitmq_shovel plugin and a user with "
                          "the 'policymaker' or 'administrator' tag)", permanent=True) from None
    return ServerMove(name=name, source=source, destination=destination, count=count, state="starting",
                      resend_window=PREFETCH)


def stop_shovel(api: ManagementAPI, vhost: str, name: str) -> None:
    api.delete(parameter_path(vhost, name))
