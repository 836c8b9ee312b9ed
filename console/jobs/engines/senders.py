"""Publishing for a job on worker threads, so the job's own thread can meanwhile work on
PostgreSQL (console.jobs.engines.publish overlaps the two), each connection in a publisher process of
its own for a job of many letters (console.brokers.publish_process).

A job's ``concurrency`` is the number of connections per broker that publish slices of a
batch at the same time, each with its own window of confirms. With concurrency 1 a batch goes
out in order; above 1 the slices interleave, so order across them is not kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings

from console.access.redaction_policy import for_everyone
from console.access.redactor import Redactor
from console.brokers import Adapter, BrokerError, PublishResult, adapter_class
from console.brokers.publication import Publication, to_outgoing
from console.brokers.publish_process import ChildPublisher
from console.jobs.control import with_broker_retry
from console.models import Broker, Job
from console.tracing import telemetry

#: From this many letters a job publishes through a publisher process per connection
#: (console.brokers.publish_process); below it, starting one costs more than it saves.
CHILD_FROM = 500

#: What a publish came to: the keys the broker confirmed, and the refused ones with its reason.
Outcome = tuple[list[Any], dict[Any, str]]


class Publisher(Protocol):
    """How a job publishes to one broker: in this process, or through a publisher process."""

    def start(self, publications: Sequence[Publication], *, window: int) -> Future[list[PublishResult]]: ...

    def publish(self, publications: Sequence[Publication], *, window: int) -> list[PublishResult]: ...

    def close(self) -> None: ...


class _InProcess:
    """An adapter publishing in this process (one without a process of its own, or a small
    job), on the Senders' threads."""

    def __init__(self, adapter: Adapter, pool: ThreadPoolExecutor) -> None:
        self.adapter = adapter
        self.pool = pool

    def start(self, publications: Sequence[Publication], *, window: int) -> Future[list[PublishResult]]:
        return self.pool.submit(self.publish, publications, window=window)

    def publish(self, publications: Sequence[Publication], *, window: int) -> list[PublishResult]:
        return self.adapter.publish([to_outgoing(p) for p in publications], window=window)

    def close(self) -> None:
        self.adapter.close()


def _publisher(broker: Broker, job: Job, pool: ThreadPoolExecutor) -> Publisher:
    """How the job publishes to ``broker``: through a publisher process (ChildPublisher), whose
    batches are pipelined, or in this process."""
    if adapter_class(broker.kind).in_process or (job.total or 0) < CHILD_FROM:
        return _InProcess(broker.adapter(), pool)
    return ChildPublisher(broker.config(), subject=repr(broker.name))


@dataclass
class _Part:
    adapter: Publisher
    publications: Sequence[Publication]
    future: Future[list[PublishResult]]
    span: Any = None  # the batch's span while the console's telemetry is on (console.tracing.telemetry)


#: What :meth:`Senders.send` hands back for :meth:`Senders.wait`: the parts under way.
Sending = list[_Part]


def publish_confirmed(job: Job, adapter: Publisher, publications: Sequence[Publication]) -> Outcome:
    """Publish with the broker's confirms, waiting out an outage (status ``waiting``).

    Returns the keys the broker confirmed, and the refused ones with the broker's reason.
    """
    return _split_results(with_broker_retry(
        job, lambda: adapter.publish(publications, window=settings.DLO_BATCH_SIZE)))


def _split_results(results: Sequence[PublishResult]) -> Outcome:
    confirmed = [result.key for result in results if result.ok]
    refused = {result.key: result.error or "not confirmed by the broker" for result in results if not result.ok}
    return confirmed, refused


class Senders:
    """One adapter per broker and slot, and the threads that publish through them."""

    def __init__(self, job: Job, concurrency: int = 1) -> None:
        self.job = job
        self.concurrency = max(1, concurrency)
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"job{job.pk}-publish")
        self._adapters: dict[tuple[int, int], Publisher] = {}
        self._site_rules: Redactor | None = None

    def __enter__(self) -> Senders:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True)
        for adapter in self._adapters.values():
            adapter.close()

    def _adapter(self, broker_id: int, slot: int) -> Publisher:
        key = (broker_id, slot)
        if key not in self._adapters:
            self._adapters[key] = _publisher(Broker.objects.get(pk=broker_id), self.job, self._pool)
        return self._adapters[key]

    def _redactor(self) -> Redactor | None:
        """The site's redaction rules, read once per job and only while the console's telemetry
        is on: a trace its rules mask is not linked from the replay's span."""
        if self._site_rules is None and telemetry.enabled():
            self._site_rules = for_everyone()
        return self._site_rules

    def send(self, by_broker: dict[int, list[Publication]]) -> Sending:
        """Start publishing; the returned handle is for :meth:`wait`."""
        parts: Sending = []
        for broker_id, publications in by_broker.items():
            slices = [publications[slot::self.concurrency] for slot in range(self.concurrency)]
            for slot, part in enumerate(slice_ for slice_ in slices if slice_):
                adapter = self._adapter(broker_id, slot)
                span, traced = telemetry.replay_batch(self.job.pk, part, self._redactor())
                parts.append(_Part(adapter, traced, adapter.start(traced, window=settings.DLO_BATCH_SIZE), span))
        return parts

    def wait(self, sending: Sending | None, *, retry: bool = True) -> Outcome:
        """The confirmed keys and refused keys (with reasons) of what :meth:`send` started. A part whose broker
        went away is published again from here, waiting out the outage, unless ``retry`` is
        false; a permanent error is raised."""
        confirmed: list[Any] = []
        refused: dict[Any, str] = {}
        for part in sending or []:
            ok: list[Any] = []
            try:
                ok, not_ok = _split_results(part.future.result())
            except BrokerError as exc:
                if exc.permanent or not retry:
                    raise
                # Republished with the same replay ids: duplicates at most, never a loss.
                ok, not_ok = publish_confirmed(self.job, part.adapter, part.publications)
            finally:
                telemetry.replay_batch_ended(part.span, len(ok), len(part.publications) - len(ok))
            confirmed.extend(ok)
            refused.update(not_ok)
        return confirmed, refused
