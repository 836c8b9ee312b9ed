"""A spare reader and publisher for every kind of broker configured, started with each worker
process, so that the first capture or replay after a worker starts does not wait for its
child to start and import the broker's client (console.brokers.child_process; what a spare
saves: see benchmarks/README.md, child_start.py). Later jobs find the spare
their last child left.
"""

from __future__ import annotations

import logging

from console.brokers import capture_process, publish_process
from console.brokers.child_process import adapter_module, start_spare
from console.brokers.registry import adapter_class
from console.models import Broker

log = logging.getLogger(__name__)


def start_spares() -> None:
    """Start the spares. A database that cannot be read now only means no spares: the jobs
    start their children themselves."""
    try:
        kinds = sorted(set(Broker.objects.values_list("kind", flat=True)))
    except Exception as exc:  # noqa: BLE001 - a worker starts whatever the database says
        log.warning("no spare broker children: the brokers could not be read (%s)", exc)
        return
    started = []
    for kind in kinds:
        try:
            if adapter_class(kind).in_process:
                continue  # its captures and replays run in the worker itself
        except ValueError:
            continue  # a kind this version does not know
        for module in (capture_process.__name__, publish_process.__name__):
            start_spare(module, adapter_module(kind))
        started.append(kind)
    if started:
        log.info("spare readers and publishers started for %s brokers", ", ".join(started))
