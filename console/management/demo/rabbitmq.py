"""The demo on a real RabbitMQ: declare the topology, publish the catalogue, and let the
consumers reject their failures so that RabbitMQ dead-letters them itself (x-death and all).

Talks AMQP through aio-pika (publisher confirms, mandatory) and asks the management API only
whether the broker is there.
"""

from __future__ import annotations

import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import aio_pika
import httpx
from aio_pika import DeliveryMode, ExchangeType

from console.brokers.asyncloop import LoopThread
from console.management.demo.catalogue import (
    EXCHANGE,
    SUBSCRIPTIONS,
    dead_letter_count,
    failures,
    messages,
    publish_times,
)

T = TypeVar("T")


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on a loop of its own thread: ``call_command("demo")`` may come from a
    thread whose own loop is running (asyncio.run would refuse, and the demo would take that
    for a missing RabbitMQ)."""
    loop = LoopThread("demo-rabbitmq")
    try:
        return loop.run(coro)
    finally:
        loop.stop()


def answers(amqp_url: str, management_url: str, username: str, password: str) -> bool:
    """True when both the AMQP port and the management API answer with these credentials."""
    try:
        response = httpx.get(f"{management_url.rstrip('/')}/api/overview", auth=(username, password), timeout=3)
    except httpx.HTTPError:
        return False
    if response.status_code != 200:
        return False

    async def connect() -> None:
        connection = await aio_pika.connect(amqp_url, timeout=3)
        await connection.close()

    try:
        _run(connect())
    except Exception:  # refused, timed out, or refused credentials: no RabbitMQ for the demo
        return False
    return True


def dead_letter_depths(amqp_url: str) -> dict[str, int]:
    """Declare the demo topology (idempotent) and return the depth of each DLQ."""
    return _run(_with_channel(amqp_url, _declare))


def make_letters_die(amqp_url: str, timeout: float = 15.0) -> int:
    """Publish the catalogue, reject the failures, and wait until the DLQs hold them all."""
    _run(_with_channel(amqp_url, _publish_and_consume))
    wanted = dead_letter_count()
    deadline = time.monotonic() + timeout
    while True:
        held = sum(dead_letter_depths(amqp_url).values())
        if held >= wanted or time.monotonic() > deadline:
            return held
        time.sleep(0.2)


async def _with_channel(amqp_url: str, work):
    connection = await aio_pika.connect(amqp_url, timeout=5)
    async with connection:
        channel = await connection.channel(publisher_confirms=True)
        return await work(channel)


async def _declare(channel) -> dict[str, int]:
    orders = await channel.declare_exchange(EXCHANGE, ExchangeType.TOPIC, durable=True)
    depths = {}
    for sub in SUBSCRIPTIONS:
        dlx = await channel.declare_exchange(sub.dead_letter_exchange, ExchangeType.FANOUT, durable=True)
        dlq = await channel.declare_queue(sub.dead_letter_queue, durable=True)
        await dlq.bind(dlx)
        queue = await channel.declare_queue(
            sub.queue, durable=True, arguments={"x-dead-letter-exchange": sub.dead_letter_exchange}
        )
        await queue.bind(orders, sub.binding)
        depths[sub.dead_letter_queue] = dlq.declaration_result.message_count
    return depths


async def _publish_and_consume(channel) -> None:
    await _declare(channel)
    orders = await channel.get_exchange(EXCHANGE)
    for message, published_at in zip(messages(), publish_times(), strict=False):
        props = message.properties(published_at)
        props.pop("delivery_mode")
        await orders.publish(
            aio_pika.Message(message.body, headers=message.headers, delivery_mode=DeliveryMode.PERSISTENT, **props),
            routing_key=message.routing_key, mandatory=True,
        )
    # The subscribers: each one takes every delivery, acks what it handles, rejects the rest
    # without requeue, so RabbitMQ dead-letters those through the queue's DLX.
    rejected = failures()
    for sub in SUBSCRIPTIONS:
        queue = await channel.get_queue(sub.queue)
        while (delivery := await queue.get(no_ack=False, fail=False, timeout=5)) is not None:
            if delivery.message_id in rejected[sub.queue]:
                await delivery.reject(requeue=False)
            else:
                await delivery.ack()
