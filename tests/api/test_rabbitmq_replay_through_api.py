"""End to end on the real RabbitMQ, through the API only: a topic exchange fans out to two
subscription queues, each with its own DLX and DLQ; one subscription rejects a message. After
discover, capture and replay, the message is back in that one subscription exactly once, with
the replay id header, and the other subscription got nothing more. All of it is audited."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

import aio_pika
import pytest

from console.brokers.asyncloop import LoopThread
from console.jobs.door.runner import run_job

# Adding a broker is the admin's (console.access.roles).
pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db, pytest.mark.role("admin")]

AMQP_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
MANAGEMENT_URL = "http://127.0.0.1:15672"
BODY = b'{"order": 42, "note": "<script>alert(1)</script>"}'


@dataclass
class Topology:
    """Uniquely named exchange and queues of one test run."""

    prefix: str

    @property
    def topic(self) -> str:
        return f"{self.prefix}.orders"

    @property
    def subscriptions(self) -> tuple[str, str]:
        return f"{self.prefix}.billing", f"{self.prefix}.shipping"

    def exchanges(self) -> list[str]:
        return [self.topic, *(f"{sub}.dlx" for sub in self.subscriptions)]

    def queues(self) -> list[str]:
        return [*self.subscriptions, *(f"{sub}.dlq" for sub in self.subscriptions)]


async def _declare(topology: Topology) -> None:
    connection = await aio_pika.connect(AMQP_URL)
    async with connection:
        channel = await connection.channel()
        topic = await channel.declare_exchange(topology.topic, aio_pika.ExchangeType.TOPIC)
        for sub in topology.subscriptions:
            dlx = await channel.declare_exchange(f"{sub}.dlx", aio_pika.ExchangeType.DIRECT)
            dlq = await channel.declare_queue(f"{sub}.dlq")
            await dlq.bind(dlx, routing_key=sub)
            queue = await channel.declare_queue(sub, arguments={
                "x-dead-letter-exchange": f"{sub}.dlx", "x-dead-letter-routing-key": sub,
            })
            await queue.bind(topic, routing_key="orders.#")


async def _publish_and_fail_one(topology: Topology) -> None:
    """Publish one order through the topic; billing rejects it, shipping processes it."""
    billing, shipping = topology.subscriptions
    connection = await aio_pika.connect(AMQP_URL)
    async with connection:
        channel = await connection.channel()  # publisher confirms: routed once this returns
        topic = await channel.get_exchange(topology.topic)
        await topic.publish(
            aio_pika.Message(BODY, headers={"tenant": "acme"}, message_id="order-42",
                             content_type="application/json"),
            routing_key="orders.created", mandatory=True,
        )
        rejected = await (await channel.get_queue(billing)).get(no_ack=False)
        await rejected.reject(requeue=False)
        processed = await (await channel.get_queue(shipping)).get(no_ack=False)
        await processed.ack()
        await _wait_for_depth(channel, f"{billing}.dlq", 1)


async def _wait_for_depth(channel, queue_name: str, depth: int) -> None:
    """Dead-lettering is asynchronous: wait (bounded) until the queue holds ``depth`` messages."""
    for _ in range(200):
        queue = await channel.declare_queue(queue_name, passive=True)
        if queue.declaration_result.message_count >= depth:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{queue_name} never held {depth} messages")


async def _drain(queue_name: str) -> list[aio_pika.abc.AbstractIncomingMessage]:
    """Take every message now in the queue (acked: the test is their last consumer)."""
    connection = await aio_pika.connect(AMQP_URL)
    taken = []
    async with connection:
        channel = await connection.channel()
        queue = await channel.get_queue(queue_name)
        while (message := await queue.get(no_ack=True, fail=False)) is not None:
            taken.append(message)
    return taken


async def _delete(topology: Topology) -> None:
    connection = await aio_pika.connect(AMQP_URL)
    async with connection:
        channel = await connection.channel()
        for name in topology.queues():
            await channel.queue_delete(name)
        for name in topology.exchanges():
            await channel.exchange_delete(name)


def _run(coro):
    """Run a coroutine on a loop thread of its own: the worker that runs the browser tests has
    Playwright's event loop running in its main thread, where asyncio.run refuses to start."""
    loop = LoopThread("api-e2e")
    try:
        return loop.run(coro, 60)
    finally:
        loop.stop()


@pytest.fixture
def topology():
    topology = Topology(f"dlo-api-e2e-{uuid.uuid4().hex[:8]}")
    _run(_declare(topology))
    yield topology
    _run(_delete(topology))


def test_a_rejected_message_goes_back_to_its_one_subscription_through_the_api(api, topology):
    billing, shipping = topology.subscriptions
    _run(_publish_and_fail_one(topology))

    created = api.post("/api/brokers/", {
        "name": topology.prefix, "kind": "rabbitmq", "url": AMQP_URL,
        "management_url": MANAGEMENT_URL, "options": {"vhosts": ["/"]},
    }, format="json")
    assert created.status_code == 201, created.content
    broker = created.json()
    assert broker["url"] == "amqp://127.0.0.1:5672/%2F" and broker["has_password"] is True
    assert broker["capabilities"]["peek"] is False  # RabbitMQ cannot browse without requeueing

    discovered = api.post(f"/api/brokers/{broker['id']}/discover/")
    assert discovered.status_code == 200, discovered.content
    places = {place["name"]: place for place in discovered.json()}
    place = places[f"{billing}.dlq"]
    assert (place["depth"], place["origins"]) == (1, [billing])
    assert places[f"{shipping}.dlq"]["depth"] == 0

    capture = api.post(f"/api/places/{place['id']}/capture/", {"reason": "billing bug 77"}, format="json")
    assert capture.status_code == 202, capture.content
    assert run_job(capture.json()["id"]) == "succeeded"
    (letter,) = api.get("/api/letters/", {"place": place["id"]}).json()["results"]
    assert (letter["origin_queue"], letter["reason"], letter["state"]) == (billing, "rejected", "held")

    replay = api.post("/api/jobs/", {"action": "replay", "letters": [letter["id"]],
                                     "reason": "billing bug 77 fixed"}, format="json")
    assert replay.status_code == 202, replay.content
    assert run_job(replay.json()["id"]) == "succeeded"
    replayed = api.get(f"/api/letters/{letter['id']}/").json()
    assert replayed["state"] == "replayed" and replayed["replay_id"]

    (back,) = _run(_drain(billing))
    assert back.body == BODY
    assert back.headers["x-dlo-replay-id"] == replayed["replay_id"]
    assert back.headers["tenant"] == "acme"
    assert _run(_drain(shipping)) == []
    assert _run(_drain(f"{billing}.dlq")) == [] and _run(_drain(f"{shipping}.dlq")) == []

    # Asked action by action: the discovery also audits every other test's queue in the shared
    # vhost as appeared (the suite runs in parallel), which can push the others off one page.
    expected = {"broker.add", "broker.discover", "place.appeared", "capture", "replay"}
    events = [e for action in sorted(expected) for e in api.get(f"/api/audit/?action={action}").json()["results"]]
    mine = {e["action"]: e for e in events if e["broker"] == topology.prefix or letter["id"] in e["letter_ids"]}
    assert set(mine) == expected
    assert all(e["actor"] == "olga" for e in mine.values())
    assert mine["capture"]["letter_ids"] == [letter["id"]]
    assert (mine["replay"]["letter_ids"], mine["replay"]["reason"]) == ([letter["id"]], "billing bug 77 fixed")
    assert mine["replay"]["target"] == billing
    assert api.get("/api/audit/verify/").json()["ok"] is True
