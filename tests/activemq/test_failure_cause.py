"""Reading ``dlqDeliveryFailureCause``: the variants ActiveMQ 5.17's clients write, as pure
tests (a STOMP client cannot cause a redelivery-limit death: a NACK is a poison ack without a
cause; test_redelivery_limit_death makes one for real with a JMS consumer)."""

from __future__ import annotations

from types import SimpleNamespace

from console.brokers.activemq.messages import read_cause, received, send_headers
from console.brokers.base import Outgoing
from console.letters.frameworks import enrich

POLICY = ("RedeliveryPolicy {destination = null, collisionAvoidanceFactor = 0.15, maximumRedeliveries = 6, "
          "maximumRedeliveryDelay = -1, initialRedeliveryDelay = 1000, useCollisionAvoidance = false, "
          "useExponentialBackOff = false, backOffMultiplier = 5.0, redeliveryDelay = 1000, preDispatchCheck = true}")


def frame(**headers):
    base = {"message-id": "ID:host-1:1:1:1:1", "destination": "/queue/ActiveMQ.DLQ", "ack": "ID:host-2:7",
            "subscription": "dlo-sub-1", "original-destination": "/queue/orders", "persistent": "true",
            "timestamp": "1795332334021", "expires": "0", "priority": "4"}
    return SimpleNamespace(headers={**base, **headers}, body=b"{}")


def test_redelivery_limit_with_the_listener_exception():
    cause = f"java.lang.Throwable: Delivery[7] exceeds redelivery policy limit:{POLICY}, " \
            "cause:java.lang.IllegalStateException: order 12 has no customer"
    found = read_cause(cause)
    assert found["reason"] == "max_redeliveries"
    assert found["death_count"] == 7
    assert found["exception_type"] == "java.lang.IllegalStateException"
    assert found["exception_message"] == "order 12 has no customer"


def test_redelivery_limit_without_a_cause_and_from_a_dispatch():
    found = read_cause(f"java.lang.Throwable: Dispatch[4] to ID:host-3:1:1:1 exceeds redelivery policy "
                       f"limit:{POLICY}")
    assert (found["reason"], found["death_count"]) == ("max_redeliveries", 4)
    assert "exception_type" not in found
    assert read_cause(f"java.lang.Throwable: Delivery[7] exceeds redelivery policy limit:{POLICY}, cause:null") \
        == {"reason": "max_redeliveries", "death_count": 7}


def test_nack_expiry_and_unknown_causes():
    assert read_cause("") == {"reason": "poison_ack", "death_count": 1}
    expired = read_cause("java.lang.Throwable: Message Expired. Expiration:1795332356668")
    assert expired["reason"] == "expired"
    assert expired["last_failed_at"].timestamp() == 1795332356.668
    assert read_cause("java.lang.Throwable: something else")["reason"] == "poison_ack"


def test_envelope_from_a_frame_keeps_the_adapter_reading_over_the_framework_one():
    letter = received(frame(dlqDeliveryFailureCause=f"java.lang.Throwable: Delivery[7] exceeds redelivery "
                                                    f"policy limit:{POLICY}, cause:java.lang.RuntimeException: boom",
                            redelivered="true"), "ActiveMQ.DLQ")
    env = enrich(letter.envelope, letter.headers)
    assert (env.origin_queue, env.origin_address) == ("orders", "/queue/orders")
    assert (env.reason, env.death_count) == ("max_redeliveries", 7)
    assert (env.exception_type, env.exception_message) == ("java.lang.RuntimeException", "boom")
    assert letter.redelivered
    assert letter.token == "ID:host-2:7"
    assert "ack" not in letter.headers and "subscription" not in letter.headers
    assert letter.properties["bytes_message"] is False


def test_a_topic_origin_is_replayed_to_the_topic():
    letter = received(frame(**{"original-destination": "/topic/prices"}), "ActiveMQ.DLQ")
    assert letter.envelope.origin_queue == "/topic/prices"


def test_send_headers_drop_what_the_broker_set_and_keep_hostile_values():
    letter = received(frame(**{"content-length": "2", "customer": "<script>alert(1)</script>",
                               "dlqDeliveryFailureCause": "x", "a:b\nc": "v"}), "ActiveMQ.DLQ")
    out = Outgoing(key=1, destination="orders", body=b"{}", headers={**letter.headers, "x-dlo-replay-id": "r1"},
                   properties=letter.properties)
    headers = send_headers(out)
    assert headers["customer"] == "<script>alert(1)</script>"
    assert headers["content-length"] == "2"  # it was a BytesMessage
    assert headers["persistent"] == "true" and headers["x-dlo-replay-id"] == "r1"
    assert headers["a\\cb\\nc"] == "v"  # a header name is escaped, never split into two headers
    for dropped in ("message-id", "destination", "original-destination", "dlqDeliveryFailureCause",
                    "timestamp", "ack", "subscription"):
        assert dropped not in headers
