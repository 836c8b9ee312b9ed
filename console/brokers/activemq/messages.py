"""MESSAGE frames from a DLQ as letters, and letters as SEND frames.

What ActiveMQ Classic 5.17 writes on the DLQ copy, as a STOMP consumer sees it:
``original-destination`` (``/queue/orders``), ``originalExpiration``, the application's own
headers, the JMS ones (``message-id``, ``persistent``, ``priority``, ``expires``,
``timestamp``...), ``content-length`` for a BytesMessage only, and
``dlqDeliveryFailureCause`` when the broker knew a cause:

* ``java.lang.Throwable: Message Expired. Expiration:<ms>``: the message expired;
* ``java.lang.Throwable: Delivery[7] exceeds redelivery policy limit:RedeliveryPolicy {...},
  cause:<the listener's exception or null>``: a JMS client gave up after its redeliveries
  (also ``Dispatch[7] to <consumer> exceeds ...``);
* nothing: a poison ack without a cause, which is what a STOMP ``NACK`` is.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from console.brokers.base import Outgoing, Received
from console.letters.envelope import FailureEnvelope
from console.letters.frameworks import type_from_stack

#: The JMS header fields among a frame's headers, kept as the letter's properties.
JMS_HEADERS = ("message-id", "persistent", "priority", "expires", "timestamp", "type", "correlation-id",
               "reply-to", "content-type")
#: Set by ActiveMQ for one delivery, not part of the message: left out of the stored headers
#: (they change between deliveries, and the custody key must not).
DELIVERY_HEADERS = ("ack", "subscription", "redelivered")
#: Set by the broker on the copy it made; a replay must not send them back.
BROKER_HEADERS = ("message-id", "destination", "original-destination", "originalExpiration",
                  "dlqDeliveryFailureCause", "content-length", "timestamp", "receipt", "transaction",
                  "redeliveryCounter", *DELIVERY_HEADERS)
#: Marks a letter whose DLQ copy came with content-length: a BytesMessage, sent back as one.
BYTES_MESSAGE = "bytes_message"

_DELIVERIES = re.compile(r"(?:delivery|dispatch)\[(\d+)\]", re.IGNORECASE)
_INNER_CAUSE = re.compile(r",\s*cause:(.*)\Z", re.DOTALL)


def origin_name(destination: str) -> str:
    """Where a replay goes: a queue by its bare name, a topic with its ``/topic/`` prefix (a
    bare name means a queue, so stripping it would send a topic's letters to a queue)."""
    if destination.startswith("/queue/"):
        return destination[len("/queue/"):]
    if destination.startswith("queue://"):
        return destination[len("queue://"):]
    if destination.startswith("topic://"):
        return "/topic/" + destination[len("topic://"):]
    return destination


def destination_of(name: str) -> str:
    """A place or target name as a STOMP destination: bare names are queues."""
    return name if name.startswith(("/queue/", "/topic/", "/temp-queue/", "/temp-topic/")) else f"/queue/{name}"


def epoch_ms(value: Any) -> datetime | None:
    try:
        millis = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    if millis <= 0:
        return None
    return datetime.fromtimestamp(millis / 1000, tz=UTC)


def read_cause(cause: str) -> dict[str, Any]:
    """Reason, death count and failure fields from ``dlqDeliveryFailureCause``.

    ``frameworks.enrich`` also reads this header, but only as one exception; here the redelivery
    limit's own wording is taken apart: the count in ``Delivery[7]`` and the listener's exception
    after ``cause:``, which is what the operator wants to see (and what should group letters).
    """
    if not cause.strip():
        return {"reason": "poison_ack", "death_count": 1}
    if "Message Expired" in cause:
        expiration = re.search(r"Expiration:\s*(\d+)", cause)
        return {"reason": "expired", "death_count": 1,
                "last_failed_at": epoch_ms(expiration.group(1)) if expiration else None}
    if "redelivery policy" in cause.lower():
        found: dict[str, Any] = {"reason": "max_redeliveries"}
        count = _DELIVERIES.search(cause)
        found["death_count"] = int(count.group(1)) if count else 1
        inner = _INNER_CAUSE.search(cause)
        if inner and inner.group(1).strip() not in ("", "null"):
            type_, message = type_from_stack(inner.group(1))
            found.update(exception_type=type_, exception_message=message or inner.group(1).strip(),
                         exception_stack=inner.group(1).strip())
        return found
    return {"reason": "poison_ack", "death_count": 1}


def taken(frame: Any, place: str) -> Received:
    """A MESSAGE frame consumed from a dead place (by a capture or the keeper's reader), flagged
    ``redelivered`` whatever the broker says: ActiveMQ's flag does not survive a restart of the
    broker (a message delivered and not acknowledged when it stopped comes back without it,
    checked on 5.17.2), and custody matches only redelivered messages against copies committed
    and never acknowledged. A flag set where the broker did not redeliver costs custody one
    look-up of pending copies for the batch, which finds none (the custody key holds the
    message-id). Run the broker with ``persistJMSRedelivered="true"`` and its flag would hold,
    but the console cannot tell that it does."""
    message = received(frame, place)
    message.redelivered = True
    return message


def received(frame: Any, place: str) -> Received:
    """A MESSAGE frame from a dead place as a letter; ``token`` is its ``ack`` id (None when
    browsed)."""
    raw = dict(frame.headers)
    body = frame.body if isinstance(frame.body, bytes) else str(frame.body or "").encode("utf-8")
    headers = {name: value for name, value in raw.items() if name not in DELIVERY_HEADERS}
    properties: dict[str, Any] = {name: raw[name] for name in JMS_HEADERS if name in raw}
    properties[BYTES_MESSAGE] = "content-length" in raw
    properties["dead_place"] = place
    destination = str(raw.get("original-destination", ""))
    found = read_cause(str(raw.get("dlqDeliveryFailureCause", "")))
    if "redeliveryCounter" in raw and str(raw["redeliveryCounter"]).isdigit():
        found["death_count"] = max(found["death_count"], int(raw["redeliveryCounter"]))
    details: dict[str, Any] = {"dead_place": place}
    published = epoch_ms(raw.get("timestamp"))
    if published:
        details["published_at"] = published.isoformat()
    if str(raw.get("originalExpiration", "0")) not in ("", "0"):
        details["original_expiration"] = str(raw["originalExpiration"])
    envelope = FailureEnvelope(origin_address=destination, origin_queue=origin_name(destination),
                               details=details, **found)
    return Received(
        token=raw.get("ack"), body=body, headers=headers, properties=properties, envelope=envelope,
        redelivered=str(raw.get("redelivered", "")).lower() == "true",
        message_id=str(raw.get("message-id", "")),
    )


def escape_name(name: str) -> str:
    """STOMP 1.2 escaping for a header name (stomp.py escapes values only)."""
    return name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace(":", "\\c")


def send_headers(out: Outgoing) -> dict[str, str]:
    """The SEND frame's headers: the message's own, as captured, without the broker's.

    ``content-length`` is added back only for a BytesMessage: on ActiveMQ its presence is what
    makes a message bytes, so a TextMessage stays text. Persistence is kept as it was.
    """
    headers = {escape_name(str(name)): str(value) for name, value in out.headers.items()
               if name not in BROKER_HEADERS and value is not None}
    if out.properties.get(BYTES_MESSAGE):
        headers["content-length"] = str(len(out.body))
    return headers
