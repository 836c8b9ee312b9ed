"""A real ``celery -A console worker`` process runs a job made through the services.

The worker uses the embedded transport (kombu's filesystem transport) in a folder of its own
and the test database; the job is queued by the service on commit, exactly as in production.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings

from console.brokers.memory.adapter import Message
from console.celery import app
from console.embedded import filesystem_broker_options
from console.models import AuditEvent, DeadLetter, Job
from console.services.brokers import do_discover
from console.services.custody import store_captured
from console.services.jobs import do_mark_failed

PROJECT = Path(__file__).resolve().parent.parent
WAIT_SECONDS = 60


def _database_url() -> str:
    """The URL of the test database pytest-django created (its NAME is test_<name>)."""
    db = settings.DATABASES["default"]
    credentials = quote(db.get("USER") or "", safe="") + ":" + quote(db.get("PASSWORD") or "", safe="")
    # The embedded server listens on a socket folder, which dj-database-url puts in OPTIONS.
    host = db.get("HOST") or db.get("OPTIONS", {}).get("host") or ""
    if host.startswith("/"):
        return f"postgres://{credentials}@/{db['NAME']}?host={quote(host, safe='/')}"
    return f"postgres://{credentials}@{host or 'localhost'}:{db.get('PORT') or 5432}/{db['NAME']}"


@pytest.fixture
def filesystem_transport(tmp_path, monkeypatch):
    """Send this test's tasks to a folder of its own, and give the same folder to the worker."""
    folder = tmp_path / "celery"
    monkeypatch.setenv("CELERY_FILESYSTEM_DIR", str(folder))
    saved = (app.conf.broker_url, app.conf.broker_transport_options)
    app.close()  # drop pooled connections made with the old options
    app.conf.broker_url = "filesystem://"
    app.conf.broker_transport_options = filesystem_broker_options()
    yield folder
    app.close()
    app.conf.broker_url, app.conf.broker_transport_options = saved


@pytest.fixture
def worker(filesystem_transport, tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_FILESYSTEM_DIR": str(filesystem_transport),
        "DJANGO_SETTINGS_MODULE": "console.settings",
    }
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "console", "worker", "-l", "info", "--pool", "solo",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    yield process
    # Its work is checked in the database by then; a warm shutdown would only cost seconds.
    process.kill()
    process.wait()
    log.close()


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_job_made_through_the_services(memory_broker, worker, operator, tmp_path):
    fake, broker = memory_broker
    fake.queue("orders")
    for i in range(3):
        fake.queue("orders.dlq").append(Message(f"order {i}".encode(), {"x-origin-queue": "orders"}))
    (place,) = do_discover(broker, actor=operator)
    with broker.adapter().open_capture(place.ref, prefetch=10) as session:
        batch = session.next_batch(10, 0)
        ids = store_captured(place, batch, job=None, actor=operator)
        session.ack(batch)

    job = do_mark_failed(actor=operator, reason="won't fix: test orders", ids=ids[:2])
    assert list((tmp_path / "celery" / "queue").iterdir()), "the service queued no task on commit"

    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        job.refresh_from_db()
        if job.is_finished or worker.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    log = (tmp_path / "worker.log").read_text()
    assert job.status == Job.Status.SUCCEEDED, f"job {job.status}; worker log:\n{log[-3000:]}"
    assert "Task console.run_job[" in log
    assert job.done == 2
    states = dict(DeadLetter.objects.values_list("id", "state"))
    assert states == {ids[0]: "failed", ids[1]: "failed", ids[2]: "held"}
    event = AuditEvent.objects.get(action="mark_failed")
    assert (event.actor_name, event.letter_ids, event.job_id) == ("olga", ids[:2], job.pk)
