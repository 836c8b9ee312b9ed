"""The console's automation under its own telemetry (issue 34, point 4): a real ``manage.py keep``
and a real Celery worker, with the standard OTEL_EXPORTER_OTLP_ENDPOINT set, send a real
OTLP/HTTP endpoint on loopback (tests.otlp_receiver) a span per keeper round and per round of
the rules, each with its PostgreSQL statements under it (the rules' round under the Celery
task's span)."""

from __future__ import annotations

import pytest

from console.celery import app
from tests.otlp_receiver import OtlpReceiver
from tests.workers import Keeper, Worker

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver():
    endpoint = OtlpReceiver()
    yield endpoint
    endpoint.close()


def traced(receiver: OtlpReceiver) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}


def with_statements(name: str):
    def found(spans):
        rounds = {span.span_id: span for span in spans if span.name == name}
        below = [span for span in spans if span.parent_span_id in rounds and span.attributes.get("db.system")]
        return (rounds[below[0].parent_span_id], below) if below else None
    return found


def test_keeper_rounds_are_spans(filesystem_transport, tmp_path, receiver):
    keeper = Keeper(filesystem_transport, tmp_path / "keeper.log", **traced(receiver))
    keeper.start()
    try:
        round_, statements = receiver.wait_for(with_statements("keeper round"), "a keeper round with statements")
    finally:
        keeper.stop()
        keeper.kill()
    assert round_.resource["dlo.process"] == "keeper" and round_.attributes["dlo.keeper.places"] == 0
    assert all(statement.trace_id == round_.trace_id for statement in statements)


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
    finally:
        worker.kill()
    assert (round_.attributes["dlo.rules.acting"], round_.attributes["dlo.rules.letters"]) == (0, 0)
    (task,) = [span for span in receiver.spans if span.span_id == round_.parent_span_id]
    assert task.attributes.get("celery.task_name") == "console.apply_rules"
    assert round_.resource["dlo.process"] == "worker"
