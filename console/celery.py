"""The Celery app: ``celery -A console worker``."""

from __future__ import annotations

import os

from celery import Celery
from celery.concurrency import get_implementation
from celery.signals import worker_init, worker_process_init, worker_ready

from console.malloc import give_back_large_blocks
from console.tracing import telemetry

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["console.jobs"])


@worker_init.connect
def _give_back_large_blocks(**_) -> None:
    """Before the pool starts, so that its processes inherit it (console.malloc)."""
    give_back_large_blocks()


def _start_spare_children(**_) -> None:
    """Each pool process starts with a spare reader and publisher per kind of broker
    (console.jobs.engines.spares). The query's connection is closed again: the first task opens its own."""
    from django.db import connections

    from console.jobs.engines.spares import start_spares

    try:
        start_spares()
    finally:
        connections.close_all()


@worker_init.connect
def _spares_where_tasks_run(sender=None, **_) -> None:
    """In each pool process of a prefork worker, or in the worker itself with any other pool.
    A pool process's handler is connected here, after Celery's Django fixup connected its own
    (at its worker_init, which runs first): the process has forgotten the connections it
    inherited before it reads the brokers."""
    if get_implementation(sender.pool_cls).__module__ == "celery.concurrency.prefork":
        worker_process_init.connect(_start_spare_children, weak=False)
    else:
        worker_ready.connect(_start_spare_children, weak=False)


def _start_telemetry(**_) -> None:
    telemetry.start("worker")


@worker_init.connect
def _telemetry_where_tasks_run(sender=None, **_) -> None:
    """The console's telemetry (console.tracing.telemetry), in each pool process of a prefork
    worker after its fork (an exporter's thread does not survive one), or in the worker itself
    with any other pool."""
    if get_implementation(sender.pool_cls).__module__ == "celery.concurrency.prefork":
        worker_process_init.connect(_start_telemetry, weak=False)
    else:
        _start_telemetry()
