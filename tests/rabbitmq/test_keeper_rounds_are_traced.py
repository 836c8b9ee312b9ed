"""The keeper under the console's own telemetry (issue 34, point 4): a real ``manage.py keep``
with the standard OTEL_EXPORTER_OTLP_ENDPOINT set sends nothing of its rounds while it keeps no
place (idle rounds, several a second, are no one's business), and a span per round, with the
statements under it, to a real OTLP/HTTP endpoint on loopback once a dead queue on the real
RabbitMQ is kept."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from console.services.brokers import do_discover
from tests.workers import Keeper

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]


def test_keeper_rounds_are_spans_while_it_keeps_a_place(kit, rabbit_broker, operator, filesystem_transport,
                                                        tmp_path, receiver):
    dlq = kit.queue(kit.name("kept") + ".dlq")
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    keeper = Keeper(filesystem_transport, tmp_path / "keeper.log", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
                    OTEL_BSP_SCHEDULE_DELAY="100")
    keeper.start()
    try:
        time.sleep(2)  # ten idle rounds at least (every 0.2 s), each exported within 0.1 s
        # Ten idle rounds, each asking PostgreSQL for the places to keep: none of it sent (the
        # process may send other statements, such as the log filter's one-time read of passwords).
        from_rounds = [s.name for s in receiver.spans if s.resource.get("dlo.process") == "keeper" and (
            s.name == "keeper round" or "keep_in_custody" in str(s.attributes.get("db.statement")))]
        assert from_rounds == []

        api = APIClient()
        api.force_authenticate(operator)
        answer = api.patch(f"/api/places/{place.pk}/", {"keep_in_custody": True, "reason": "traced"}, format="json")
        assert answer.status_code == 200, answer.content

        def kept_round(spans):
            rounds = {s.span_id: s for s in spans if s.name == "keeper round" and s.attributes["dlo.keeper.places"]}
            below = [s for s in spans if s.parent_span_id in rounds and s.attributes.get("db.system")]
            return (rounds[below[0].parent_span_id], below) if below else None

        round_, statements = receiver.wait_for(kept_round, "a round keeping the place, with statements")
    finally:
        keeper.stop()
        keeper.kill()
    assert round_.resource["dlo.process"] == "keeper" and round_.attributes["dlo.keeper.places"] == 1
    assert all(statement.trace_id == round_.trace_id for statement in statements)
