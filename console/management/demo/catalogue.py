"""The demo's messages: a shop publishes orders to the topic exchange ``demo.orders``; billing
and shipping each consume a subscription queue with its own dead-letter exchange and queue.

Twelve of the deliveries fail: their consumer rejects them, so they die into the DLQs. The
catalogue carries what a real shop's traffic carries: JSON orders, one gzip-compressed (binary)
body, one with hostile markup in a header and the body, and Spring-style ``x-exception-*``
headers on the ones whose listener recorded its exception.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

EXCHANGE = "demo.orders"


@dataclass(frozen=True)
class Subscription:
    """A subscription queue bound to the exchange, with its own dead-letter exchange and queue."""

    queue: str
    binding: str

    @property
    def dead_letter_exchange(self) -> str:
        return f"{self.queue}.dlx"

    @property
    def dead_letter_queue(self) -> str:
        return f"{self.queue}.dlq"


BILLING = Subscription("demo.billing", "order.*")
SHIPPING = Subscription("demo.shipping", "order.created")
SUBSCRIPTIONS = (BILLING, SHIPPING)
DEAD_LETTER_QUEUES = tuple(s.dead_letter_queue for s in SUBSCRIPTIONS)


@dataclass(frozen=True)
class DemoMessage:
    message_id: str
    routing_key: str
    body: bytes
    headers: dict[str, Any] = field(default_factory=dict)
    content_type: str = "application/json"
    content_encoding: str = ""
    fails_in: tuple[str, ...] = ()  # subscription queues whose consumer rejects it

    def properties(self, published_at: datetime) -> dict[str, Any]:
        props = {
            "message_id": self.message_id,
            "content_type": self.content_type,
            "delivery_mode": 2,
            "app_id": "shop-api",
            "correlation_id": f"checkout-{self.message_id[4:]}",
            "timestamp": published_at.replace(microsecond=0),
        }
        if self.content_encoding:
            props["content_encoding"] = self.content_encoding
        return props


def _order(number: int, **changes: Any) -> dict[str, Any]:
    order = {
        "order_id": f"ORD-{number}",
        "customer": {"id": f"C-{300 + number % 37}", "name": "Ana Lima", "email": "ana.lima@example.com"},
        "lines": [
            {"sku": "MUG-RED-350", "qty": 2, "unit_price": "12.50"},
            {"sku": "TEA-EARLGREY-100", "qty": 1, "unit_price": "7.90"},
        ],
        "currency": "EUR",
        "total": "32.90",
        "shipping_address": {"street": "Rua Augusta 27", "city": "Lisboa", "postcode": "1100-048", "country": "PT"},
        "placed_at": f"2026-11-20T09:{number % 60:02d}:00Z",
    }
    order.update(changes)
    return order


def _json(order: dict[str, Any]) -> bytes:
    return json.dumps(order, ensure_ascii=False).encode()


def _spring(exception: str, message: str, frames: list[str], routing_key: str = "order.created") -> dict[str, Any]:
    """The headers Spring AMQP's RepublishMessageRecoverer writes."""
    stack = "\n".join([f"{exception}: {message}", *(f"\tat {frame}" for frame in frames)])
    return {
        "x-exception-message": message,
        "x-exception-stacktrace": stack,
        "x-original-exchange": EXCHANGE,
        "x-original-routingKey": routing_key,
    }


_CHARGE_FRAMES = [
    "com.shop.billing.ChargeService.charge(ChargeService.java:88)",
    "com.shop.billing.OrderListener.onOrder(OrderListener.java:41)",
    "org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.invokeHandler(MessagingMessageListenerAdapter.java:272)",
]

HOSTILE_NOTE = "<script>alert('dead letter')</script>"


def messages() -> list[DemoMessage]:
    """Every message the demo publishes, in order."""
    b, s = BILLING.queue, SHIPPING.queue
    return [
        DemoMessage("ORD-1001", "order.created", _json(_order(1001))),
        DemoMessage(
            "ORD-1002", "order.created", _json(_order(1002, currency="XXX")), fails_in=(b,),
            headers=_spring("java.lang.IllegalArgumentException", "Unknown currency code 'XXX'",
                            ["com.shop.billing.Money.of(Money.java:31)", *_CHARGE_FRAMES[1:]]),
        ),
        DemoMessage("ORD-1003", "order.created", _json(_order(1003, shipping_address=None)), fails_in=(s,)),
        DemoMessage(
            "ORD-1004", "order.created", _json(_order(1004, total="-12.40")), fails_in=(b,),
            headers=_spring("com.shop.billing.InvalidAmountException", "total must be positive, was -12.40",
                            _CHARGE_FRAMES),
        ),
        DemoMessage("ORD-1005", "order.created", _json(_order(1005))),
        DemoMessage(
            "ORD-1006", "order.created", gzip.compress(_json(_order(1006)), mtime=0), fails_in=(b,),
            content_encoding="gzip", headers={"x-schema": "order/v3"},
        ),
        DemoMessage(
            "ORD-1007", "order.created",
            _json(_order(1007, customer={"id": "C-666", "name": "<img src=x onerror=alert(1)>",
                                         "email": "\"><svg onload=alert(2)>@example.com"})),
            fails_in=(b,), headers={"x-customer-note": HOSTILE_NOTE, "x-tenant": "shop-eu"},
        ),
        DemoMessage("ORD-1008", "order.created",
                    _json(_order(1008, shipping_address={"street": "1 Main St", "city": "Porto",
                                                         "postcode": "ABC", "country": "PT"})),
                    fails_in=(s,)),
        DemoMessage(
            "ORD-1009", "order.created", _json(_order(1009)), fails_in=(b,),
            headers=_spring("com.shop.billing.PaymentDeclinedException",
                            "card ending 4242 declined by issuer (code 05)", _CHARGE_FRAMES),
        ),
        DemoMessage("ORD-1010", "order.created", _json(_order(1010))),
        DemoMessage(
            "ORD-1011", "order.created", _json(_order(1011)), fails_in=(b,),
            headers=_spring("com.shop.billing.PaymentDeclinedException",
                            "card ending 1881 declined by issuer (code 51)", _CHARGE_FRAMES),
        ),
        DemoMessage("ORD-1012", "order.created", _json(_order(1012, shipping_address={})), fails_in=(s,)),
        DemoMessage("ORD-1013", "order.created", _json(_order(1013, customer={})), fails_in=(b,)),
        DemoMessage("ORD-1014", "order.created",
                    _json(_order(1014, lines=[{"sku": "PIANO-UPRIGHT", "qty": 1, "unit_price": "3900.00",
                                               "weight_kg": 230}], total="3900.00")),
                    fails_in=(s,), headers={"x-carrier": "ctt"}),
        DemoMessage(
            "ORD-1015", "order.created", _json(_order(1015)), fails_in=(b,),
            headers=_spring("org.springframework.web.client.ResourceAccessException",
                            "I/O error on POST request for \"http://payments.internal/charge\": Read timed out",
                            _CHARGE_FRAMES),
        ),
        DemoMessage("ORD-1016", "order.updated", _json(_order(1016, total="30.40"))),
    ]


def failures() -> dict[str, set[str]]:
    """Subscription queue -> ids of the messages its consumer rejects."""
    rejected: dict[str, set[str]] = {s.queue: set() for s in SUBSCRIPTIONS}
    for message in messages():
        for queue in message.fails_in:
            rejected[queue].add(message.message_id)
    return rejected


def dead_letter_count() -> int:
    return sum(len(ids) for ids in failures().values())


def publish_times(now: datetime | None = None) -> list[datetime]:
    """When each message was published: spread over the last hour, oldest first."""
    now = now or datetime.now(UTC)
    count = len(messages())
    return [now - timedelta(minutes=4 * (count - i)) for i in range(count)]
