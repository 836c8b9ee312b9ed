"""Failure details that frameworks write into headers, read into the failure envelope.

Brokers say where a letter died (x-death, original-destination, advisories); frameworks say why
(the exception). Each family below is one small reader; ``enrich`` applies them all and fills
only what the broker's own reading left empty, so an adapter never needs to know them.

Families: Spring AMQP (RepublishMessageRecoverer), Spring Kafka dead-letter topics, Kafka
Connect's dead letter queue, MassTransit ``_error`` queues, NServiceBus error queues, ActiveMQ
Artemis and ActiveMQ Classic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from console.letters.envelope import FailureEnvelope

Fields = dict[str, Any]


def text(value: Any) -> str:
    """A header value as text: bytes decoded as UTF-8 (Kafka headers are bytes)."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def big_endian_int(value: Any) -> int | None:
    """Spring Kafka writes partition (4 bytes) and offset/timestamp (8 bytes) big-endian;
    some versions and other producers write them as text."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) in (4, 8):
            return int.from_bytes(raw, "big", signed=True)
        value = raw.decode("utf-8", "replace")
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def type_from_stack(stack: str) -> tuple[str, str]:
    """``java.lang.IllegalStateException: bad order`` -> (type, message) from a stack's first line."""
    first = stack.strip().splitlines()[0] if stack.strip() else ""
    match = re.match(r"^([A-Za-z_$][\w$]*(?:[.$][\w$]+)+)(?::\s*(.*))?$", first)
    if not match:
        return "", ""
    return match.group(1), match.group(2) or ""


def last_path_segment(address: str) -> str:
    """``rabbitmq://host/vhost/orders?durable=true`` -> ``orders``."""
    return address.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


def _epoch_ms(value: int | None) -> datetime | None:
    if value is None or value <= 0:
        return None
    return datetime.fromtimestamp(value / 1000, tz=UTC)


def _parse_time(value: str, formats: tuple[str, ...]) -> datetime | None:
    for fmt in formats:
        try:
            parsed = datetime.strptime(value.strip(), fmt)
        except ValueError:
            continue
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None


def spring_amqp(h: Mapping[str, Any]) -> Fields | None:
    if "x-exception-stacktrace" not in h and "x-exception-message" not in h:
        return None
    stack = text(h.get("x-exception-stacktrace"))
    type_, first_message = type_from_stack(stack)
    return {
        "exception_type": type_,
        "exception_message": text(h.get("x-exception-message")) or first_message,
        "exception_stack": stack,
        "origin_address": text(h.get("x-original-exchange")),
        "routing_key": text(h.get("x-original-routingKey")),
        "origin_queue": text(h.get("x-original-queue")),
        "details": {"framework": "spring-amqp"},
    }


def _any_name_starts(h: Mapping[str, Any], prefix: str) -> bool:
    for name in h:
        if (name if type(name) is str else str(name)).startswith(prefix):
            return True
    return False


def spring_kafka(h: Mapping[str, Any]) -> Fields | None:
    if not _any_name_starts(h, "kafka_dlt-"):
        return None
    stack = text(h.get("kafka_dlt-exception-stacktrace"))
    return {
        "exception_type": text(h.get("kafka_dlt-exception-cause-fqcn")) or text(h.get("kafka_dlt-exception-fqcn")),
        "exception_message": text(h.get("kafka_dlt-exception-message")),
        "exception_stack": stack,
        "origin_address": text(h.get("kafka_dlt-original-topic")),
        "origin_queue": text(h.get("kafka_dlt-original-consumer-group")),
        "last_failed_at": None,
        "details": {
            "framework": "spring-kafka",
            "partition": big_endian_int(h.get("kafka_dlt-original-partition")),
            "offset": big_endian_int(h.get("kafka_dlt-original-offset")),
            "original_timestamp": _iso(_epoch_ms(big_endian_int(h.get("kafka_dlt-original-timestamp")))),
            "wrapper_exception": text(h.get("kafka_dlt-exception-fqcn")),
        },
    }


def kafka_connect(h: Mapping[str, Any]) -> Fields | None:
    prefix = "__connect.errors."
    if not _any_name_starts(h, prefix):
        return None

    def get(name: str) -> str:
        return text(h.get(prefix + name))

    return {
        "exception_type": get("exception.class.name"),
        "exception_message": get("exception.message"),
        "exception_stack": get("exception.stacktrace"),
        "origin_address": get("topic"),
        "origin_queue": get("connector.name"),
        "details": {
            "framework": "kafka-connect",
            "partition": big_endian_int(h.get(prefix + "partition")),
            "offset": big_endian_int(h.get(prefix + "offset")),
            "stage": get("stage"),
            "consumer": get("class.name"),
            "task": get("task.id"),
        },
    }


def masstransit(h: Mapping[str, Any]) -> Fields | None:
    if "MT-Fault-ExceptionType" not in h and "MT-Fault-Message" not in h:
        return None
    input_address = text(h.get("MT-Fault-InputAddress"))
    return {
        "exception_type": text(h.get("MT-Fault-ExceptionType")),
        "exception_message": text(h.get("MT-Fault-Message")),
        "exception_stack": text(h.get("MT-Fault-StackTrace")),
        "origin_queue": last_path_segment(input_address) if input_address else "",
        "last_failed_at": _parse_time(text(h.get("MT-Fault-Timestamp")), ()) if h.get("MT-Fault-Timestamp") else None,
        "details": {
            "framework": "masstransit",
            "input_address": input_address,
            "consumer": text(h.get("MT-Fault-ConsumerType")),
            "message_type": text(h.get("MT-Fault-MessageType")),
            "retry_count": big_endian_int(h.get("MT-Fault-RetryCount")),
            "host": text(h.get("MT-Host-MachineName")),
            "mt_reason": text(h.get("MT-Reason")),
        },
    }


def nservicebus(h: Mapping[str, Any]) -> Fields | None:
    prefix = "NServiceBus.ExceptionInfo."
    if "NServiceBus.FailedQ" not in h and f"{prefix}ExceptionType" not in h:
        return None
    failed_q = text(h.get("NServiceBus.FailedQ"))
    when = text(h.get("NServiceBus.TimeOfFailure"))
    return {
        "exception_type": text(h.get(f"{prefix}ExceptionType")),
        "exception_message": text(h.get(f"{prefix}Message")),
        "exception_stack": text(h.get(f"{prefix}StackTrace")),
        "origin_queue": failed_q.split("@", 1)[0],  # MSMQ writes queue@machine
        "last_failed_at": _parse_time(when.replace(" Z", " +0000"), ("%Y-%m-%d %H:%M:%S:%f %z",)) if when else None,
        "details": {
            "framework": "nservicebus",
            "failed_queue": failed_q,
            "consumer": text(h.get("NServiceBus.ProcessingEndpoint")),
            "host": text(h.get("NServiceBus.ProcessingMachine")),
            "message_type": text(h.get("NServiceBus.EnclosedMessageTypes")).split(",", 1)[0],
        },
    }


def artemis(h: Mapping[str, Any]) -> Fields | None:
    if "_AMQ_ORIG_ADDRESS" not in h and "_AMQ_ORIG_QUEUE" not in h:
        return None
    return {
        "origin_address": text(h.get("_AMQ_ORIG_ADDRESS")),
        "origin_queue": text(h.get("_AMQ_ORIG_QUEUE")),
        "details": {"framework": "artemis", "original_message_id": text(h.get("_AMQ_ORIG_MESSAGE_ID"))},
    }


def activemq_classic(h: Mapping[str, Any]) -> Fields | None:
    cause = text(h.get("dlqDeliveryFailureCause"))
    destination = text(h.get("original-destination") or h.get("originalDestination"))
    if not cause and not destination:
        return None
    type_, message = type_from_stack(cause)
    queue = re.sub(r"^(/queue/|/topic/|queue://|topic://)", "", destination)
    return {
        "exception_type": type_,
        "exception_message": message or cause,
        "exception_stack": cause,
        "origin_queue": queue,
        "origin_address": destination,
        "details": {"framework": "activemq"},
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


READERS: tuple[Callable[[Mapping[str, Any]], Fields | None], ...] = (
    spring_amqp, spring_kafka, kafka_connect, masstransit, nservicebus, artemis, activemq_classic,
)


def enrich(envelope: FailureEnvelope, headers: Mapping[str, Any]) -> FailureEnvelope:
    """Fill the envelope's empty fields from every header family present; the broker's own
    reading wins where both speak."""
    for reader in READERS:
        try:
            found = reader(headers)
        except (TypeError, ValueError, AttributeError):
            continue  # hostile or malformed headers never stop a capture
        if not found:
            continue
        details = {k: v for k, v in found.pop("details", {}).items() if v not in (None, "")}
        for name, value in found.items():
            if value and not getattr(envelope, name):
                setattr(envelope, name, value)
        framework = details.pop("framework")
        frameworks = envelope.details.setdefault("frameworks", [])
        if framework not in frameworks:
            frameworks.append(framework)
        for key, value in details.items():
            envelope.details.setdefault(key, value)
    return envelope
