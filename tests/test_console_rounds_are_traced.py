"""The rules at work under the console's own telemetry (issue 34, point 4): a real Celery worker,
with the standard OTEL_EXPORTER_OTLP_ENDPOINT set, sends a real OTLP/HTTP endpoint on loopback
(tests.otlp_receiver) a span per round of the rules, under the Celery task's span, with its
PostgreSQL statements under it. (The keeper's rounds: tests/rabbitmq/test_keeper_rounds_are_traced.py.)"""

from __future__ import annotations

import pytest

from console.celery import app
from tests.otlp_receiver import OtlpReceiver
from tests.workers import Worker

pytestmark = pytest.mark.django_db(transaction=True)


def traced(receiver: OtlpReceiver) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}


def with_statements(name: str):
    def found(spans):
        rounds = {span.span_id: span for span in spans if span.name == name}
        below = [span for span in spans if span.parent_span_id in rounds and span.attributes.get("db.system")]
        return (rounds[below[0].parent_span_id], below) if below else None
    return found


class PreforkWorker(Worker):
    """A worker whose tasks run in a forked pool process, as in production."""

    command = [*Worker.command[:Worker.command.index("--pool")], "--pool", "prefork", "--concurrency", "1",
               *Worker.command[Worker.command.index("--pool") + 2:]]


@pytest.mark.parametrize("kind", [Worker, PreforkWorker], ids=["solo", "prefork"])
def test_rule_rounds_are_spans(kind, filesystem_transport, tmp_path, receiver):
    """With a prefork pool the exporter starts in the pool process, after its fork (a thread
    started before it would not be there)."""
    worker = kind(filesystem_transport, tmp_path / "worker.log", **traced(receiver))
    worker.start()
    try:
        app.send_task("console.apply_rules")
        round_, _ = receiver.wait_for(with_statements("rules round"), "a round of the rules with statements",
                                      seconds=60)
        # The task's span ends after the round's, so it may come in a later export.
        task = receiver.wait_for(lambda spans: next((s for s in spans if s.span_id == round_.parent_span_id), None),
                                 "the round's parent, the Celery task's span")
    finally:
        worker.kill()
    assert (round_.attributes["dlo.rules.acting"], round_.attributes["dlo.rules.letters"]) == (0, 0)
    assert task.attributes.get("celery.task_name") == "console.apply_rules"
    assert round_.resource["dlo.process"] == "worker"
