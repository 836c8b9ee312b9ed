"""Dramatiq has no message headers: opentelemetry-instrumentor-dramatiq carries the trace context
in the message's options, inside its JSON body (issue 34). A real Dramatiq actor (its RabbitMQ
broker, its worker, that instrumentation: tests.traced_clients) fails its messages, which
Dramatiq's queue dead-letters into ``<queue>.XQ``; the console discovers that place, captures the
letters, and each carries the trace and span the client's exporter recorded for its send (the
failed worker span's trace and parent), found by ``trace_id``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter
from console.services.brokers import do_discover
from console.services.selection import filter_letters

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[2]


def test_dramatiq_letters_carry_the_trace_their_client_recorded(kit, rabbit_broker, operator):
    queue = kit.name("shipping")
    kit.queues += [queue, f"{queue}.XQ", f"{queue}.DQ"]  # Dramatiq declares them; the kit deletes them
    client = subprocess.run([sys.executable, "-m", "tests.traced_clients", "dramatiq", queue, "2"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert client.returncode == 0, client.stderr
    spans = json.loads(client.stdout)

    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == f"{queue}.XQ"]
    assert run_job(request_job("capture", place=place, actor=operator, reason="triage").pk) == "succeeded"
    letters = list(DeadLetter.objects.filter(place=place))
    assert len(letters) == 2
    for letter in letters:
        (sent,) = [span for span in spans if span["span_id"] == letter.span_id]
        assert sent["name"] == "dramatiq.producer.ship" and sent["trace_id"] == letter.trace_id
        (failed,) = [span for span in spans if span["kind"] == "CONSUMER" and span["parent_span_id"] == letter.span_id]
        assert failed["trace_id"] == letter.trace_id
        assert list(filter_letters({"trace_id": letter.trace_id}).values_list("id", flat=True)) == [letter.pk]
    assert len({letter.trace_id for letter in letters}) == 2
