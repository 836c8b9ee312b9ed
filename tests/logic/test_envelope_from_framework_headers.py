"""The failure envelope read from the headers that frameworks write, with real header samples."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from console.letters.envelope import FailureEnvelope
from console.letters.frameworks import enrich

JAVA_STACK = (
    "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method threw\n"
    "\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.wrapToListenerExecutionFailedExceptionIfNeeded(AbstractMessageListenerContainer.java:1775)\n"
    "\tat com.acme.billing.InvoiceListener.onOrder(InvoiceListener.java:42)\n"
)

CASES = [
    pytest.param(
        {
            "x-exception-stacktrace": JAVA_STACK,
            "x-exception-message": "Listener method threw",
            "x-original-exchange": "orders",
            "x-original-routingKey": "order.created",
        },
        {
            "exception_type": "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
            "exception_message": "Listener method threw",
            "origin_address": "orders",
            "routing_key": "order.created",
        },
        "spring-amqp",
        id="spring-amqp",
    ),
    pytest.param(
        {
            "kafka_dlt-exception-fqcn": b"org.springframework.kafka.listener.ListenerExecutionFailedException",
            "kafka_dlt-exception-cause-fqcn": b"java.lang.IllegalArgumentException",
            "kafka_dlt-exception-message": b"Listener failed; nested exception is bad sku",
            "kafka_dlt-exception-stacktrace": b"java.lang.IllegalArgumentException: bad sku\n\tat com.acme.Sku.parse(Sku.java:10)",
            "kafka_dlt-original-topic": b"orders",
            "kafka_dlt-original-partition": (3).to_bytes(4, "big"),
            "kafka_dlt-original-offset": (1234567).to_bytes(8, "big"),
            "kafka_dlt-original-timestamp": (1700000000000).to_bytes(8, "big"),
            "kafka_dlt-original-consumer-group": b"billing",
        },
        {
            "exception_type": "java.lang.IllegalArgumentException",
            "exception_message": "Listener failed; nested exception is bad sku",
            "origin_address": "orders",
            "origin_queue": "billing",
            ("details", "partition"): 3,
            ("details", "offset"): 1234567,
            ("details", "original_timestamp"): "2023-11-14T22:13:20+00:00",
        },
        "spring-kafka",
        id="spring-kafka-binary",
    ),
    pytest.param(
        {
            "__connect.errors.topic": b"customers",
            "__connect.errors.partition": b"0",
            "__connect.errors.offset": b"42",
            "__connect.errors.connector.name": b"jdbc-sink-customers",
            "__connect.errors.task.id": b"0",
            "__connect.errors.stage": b"VALUE_CONVERTER",
            "__connect.errors.class.name": b"org.apache.kafka.connect.json.JsonConverter",
            "__connect.errors.exception.class.name": b"org.apache.kafka.connect.errors.DataException",
            "__connect.errors.exception.message": b"Converting byte[] to Kafka Connect data failed due to serialization error",
            "__connect.errors.exception.stacktrace": b"org.apache.kafka.connect.errors.DataException: Converting...\n\tat org.apache.kafka.connect.json.JsonConverter.toConnectData(JsonConverter.java:324)",
        },
        {
            "exception_type": "org.apache.kafka.connect.errors.DataException",
            "origin_address": "customers",
            "origin_queue": "jdbc-sink-customers",
            ("details", "offset"): 42,
            ("details", "stage"): "VALUE_CONVERTER",
        },
        "kafka-connect",
        id="kafka-connect",
    ),
    pytest.param(
        {
            "MT-Fault-ExceptionType": "System.InvalidOperationException",
            "MT-Fault-Message": "Order 1234 has no lines",
            "MT-Fault-StackTrace": "   at Acme.Orders.SubmitOrderConsumer.Consume(ConsumeContext`1 context) in /src/SubmitOrderConsumer.cs:line 31",
            "MT-Fault-Timestamp": "2026-04-20T16:30:00.1234567Z",
            "MT-Fault-InputAddress": "rabbitmq://localhost/prod/submit-order?bind=true",
            "MT-Fault-ConsumerType": "Acme.Orders.SubmitOrderConsumer",
            "MT-Fault-MessageType": "Acme.Contracts.SubmitOrder",
            "MT-Fault-RetryCount": 3,
            "MT-Reason": "fault",
            "MT-Host-MachineName": "worker-7",
        },
        {
            "exception_type": "System.InvalidOperationException",
            "exception_message": "Order 1234 has no lines",
            "origin_queue": "submit-order",
            ("details", "consumer"): "Acme.Orders.SubmitOrderConsumer",
            ("details", "host"): "worker-7",
            ("details", "retry_count"): 3,
        },
        "masstransit",
        id="masstransit",
    ),
    pytest.param(
        {
            "NServiceBus.ExceptionInfo.ExceptionType": "System.TimeoutException",
            "NServiceBus.ExceptionInfo.Message": "The operation has timed out.",
            "NServiceBus.ExceptionInfo.StackTrace": "System.TimeoutException: The operation has timed out.\n   at Shipping.ShipOrderHandler.Handle(ShipOrder message) in C:\\src\\ShipOrderHandler.cs:line 18",
            "NServiceBus.FailedQ": "Shipping@SRV-01",
            "NServiceBus.TimeOfFailure": "2026-03-02 10:15:42:123456 Z",
            "NServiceBus.ProcessingEndpoint": "Shipping",
            "NServiceBus.ProcessingMachine": "SRV-01",
            "NServiceBus.EnclosedMessageTypes": "Messages.ShipOrder, Messages, Version=1.0.0.0",
        },
        {
            "exception_type": "System.TimeoutException",
            "origin_queue": "Shipping",
            "last_failed_at": datetime(2026, 3, 2, 10, 15, 42, 123456, tzinfo=UTC),
            ("details", "message_type"): "Messages.ShipOrder",
        },
        "nservicebus",
        id="nservicebus",
    ),
    pytest.param(
        {"_AMQ_ORIG_ADDRESS": "orders", "_AMQ_ORIG_QUEUE": "orders.billing", "_AMQ_ORIG_MESSAGE_ID": 977},
        {"origin_address": "orders", "origin_queue": "orders.billing"},
        "artemis",
        id="artemis",
    ),
    pytest.param(
        {
            "dlqDeliveryFailureCause": "java.lang.Throwable: Delivery[7] exceeds redelivery policy limit:RedeliveryPolicy {destination = null, maximumRedeliveries = 6}",
            "original-destination": "/queue/orders",
        },
        {
            "exception_type": "java.lang.Throwable",
            "exception_message": "Delivery[7] exceeds redelivery policy limit:RedeliveryPolicy {destination = null, maximumRedeliveries = 6}",
            "origin_queue": "orders",
        },
        "activemq",
        id="activemq-classic",
    ),
]


@pytest.mark.parametrize("headers, expected, framework", CASES)
def test_framework_headers_fill_the_envelope(headers, expected, framework):
    envelope = enrich(FailureEnvelope(), headers)
    for key, value in expected.items():
        actual = envelope.details[key[1]] if isinstance(key, tuple) else getattr(envelope, key)
        assert actual == value, key
    assert framework in envelope.details["frameworks"]


def test_broker_reading_wins_over_framework_headers():
    envelope = FailureEnvelope(origin_queue="billing", reason="rejected")
    enrich(envelope, {"MT-Fault-ExceptionType": "X", "MT-Fault-InputAddress": "rabbitmq://h/other"})
    assert envelope.origin_queue == "billing" and envelope.exception_type == "X"


def test_same_failure_on_two_brokers_gets_one_fingerprint():
    stack = "System.TimeoutException: timed out after 30s\n   at Shipping.Handler.Handle() in C:\\a.cs:line 18"
    on_rabbit = enrich(FailureEnvelope(origin_queue="Shipping", reason="rejected"), {
        "NServiceBus.ExceptionInfo.ExceptionType": "System.TimeoutException",
        "NServiceBus.ExceptionInfo.Message": "timed out after 30s",
        "NServiceBus.ExceptionInfo.StackTrace": stack,
    })
    on_activemq = enrich(FailureEnvelope(origin_queue="Shipping", reason="max_redeliveries"), {
        "NServiceBus.ExceptionInfo.ExceptionType": "System.TimeoutException",
        "NServiceBus.ExceptionInfo.Message": "timed out after 45s",
        "NServiceBus.ExceptionInfo.StackTrace": stack.replace("line 18", "line 19"),
    })
    other = enrich(FailureEnvelope(origin_queue="Shipping"), {
        "NServiceBus.ExceptionInfo.ExceptionType": "System.ArgumentException",
        "NServiceBus.ExceptionInfo.Message": "timed out after 30s",
    })
    assert on_rabbit.fingerprint() == on_activemq.fingerprint() != other.fingerprint()


@pytest.mark.parametrize("hostile", [
    {"kafka_dlt-original-partition": object()},
    {"MT-Fault-ExceptionType": b"\xff\xfe<script>", "MT-Fault-Timestamp": "not a time"},
    {"NServiceBus.FailedQ": 12, "NServiceBus.TimeOfFailure": "garbage"},
    {"x-exception-stacktrace": ""},
])
def test_malformed_framework_headers_never_raise(hostile):
    enrich(FailureEnvelope(), hostile)
