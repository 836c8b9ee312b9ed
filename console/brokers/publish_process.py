"""A replay's publishing done in a child process (console.brokers.child_process): the worker
marks and records letters in PostgreSQL while the child turns them into the broker's messages
(JSON decoded, frames encoded) and publishes them with confirms, each on its own interpreter
lock. The worker hands it Publications (plain values) and gets back each letter's outcome.

Publishes are pipelined: the worker hands the child the next batch while the one before is
still waiting for its confirms, and gets each batch's outcome when it is ready (by ticket). The
child makes the next batch's messages meanwhile. Batches go out in the order given: where the
adapter allows it (``publishes_concurrently``: RabbitMQ) the next batch's messages follow the
last batch's at once, while that one waits for its confirms; elsewhere a batch is published
once the one before is through.

Killed, or left by its parent, the child takes nothing with it: the letters it had not seen
confirmed stay ``replaying`` in custody and are published again, with the same replay ids.

    python -m console.brokers.publish_process <adapter module>   (started by ChildPublisher, never by hand)
"""

from __future__ import annotations

import itertools
import pickle
import queue
import subprocess
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from console.brokers import child_process
from console.brokers.base import BrokerConfig, BrokerError, Outgoing, PublishResult
from console.brokers.child_process import Message
from console.brokers.publication import Publication, to_outgoing

#: A batch's messages, made when the batch is handed over; called in the batch's turn.
Made = Callable[[], list[Outgoing]]

#: What a publisher calls itself (``ps``, ``/proc/<pid>/comm``).
NAME = "dlo-publisher"


class ChildPublisher(child_process.Child):
    """The parent's half: an adapter's ``publish`` whose broker connection lives in a child."""

    role = "replay's publisher process"
    after_death = "what it did not see confirmed is published again"

    def __init__(self, config: BrokerConfig, *, subject: str) -> None:
        self._tickets = itertools.count()
        self._waiting: dict[int, Future[list[PublishResult]]] = {}
        self._closed: Future[None] = Future()
        super().__init__(__name__, ("open", config), kind=config.kind, subject=subject)

    def _start(self) -> None:
        super()._start()
        self._closed = Future()
        threading.Thread(target=self._replies, args=(self._process, self._closed), daemon=True,
                         name="publisher-replies").start()

    def start(self, publications: Sequence[Publication], *, window: int) -> Future[list[PublishResult]]:
        """Hand the child a batch to publish after those before it; the future gives its
        results (as the adapter's ``publish``) or raises the broker's error. A child that died
        (failing what it held) is replaced first."""
        self.restart_if_gone()
        ticket = next(self._tickets)
        future: Future[list[PublishResult]] = Future()
        self._waiting[ticket] = future
        try:
            with self._lock:
                child_process.send(child_process.pipes(self._process)[0],
                                   ("publish", ticket, [tuple(p) for p in publications], window))
        except (OSError, ValueError):
            # The replies thread fails every waiting future when the child dies: whichever of
            # the two takes the ticket out settles it, once.
            if self._waiting.pop(ticket, None) is not None:
                future.set_exception(self._died())
        return future

    def publish(self, publications: Sequence[Publication], *, window: int) -> list[PublishResult]:
        return self.start(publications, window=window).result()

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                with self._lock:
                    child_process.send(child_process.pipes(self._process)[0], ("close",))
                self._closed.result(child_process.CLOSE_SECONDS)
            except Exception:  # noqa: BLE001 - a child that is gone has let go of everything already
                pass
        self._stop()
        self.leave_spare()

    def _replies(self, process: subprocess.Popen[bytes], closed: Future[None]) -> None:
        """The child's replies, each settling the future of its ticket; when the child is gone,
        every future still waiting fails with why."""
        try:
            while True:
                kind, *rest = child_process.receive(child_process.pipes(process)[1])
                if kind != "ticket":
                    closed.set_result(None)
                    return
                ticket, (outcome, *value) = rest
                future = self._waiting.pop(ticket)
                if outcome == "ok":
                    future.set_result([PublishResult(*result) for result in value[0]])
                elif outcome == "broker_error":
                    future.set_exception(BrokerError(value[0], permanent=value[1]))
                else:
                    future.set_exception(RuntimeError(f"the {self.role} failed:\n{value[0]}"))
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            died = self._died()
            for ticket in list(self._waiting):
                waiting = self._waiting.pop(ticket, None)  # None: start() took it out and failed it
                if waiting is not None:
                    waiting.set_exception(died)
            if not closed.done():
                closed.set_exception(died)


def serve(next_command: Callable[[], Message], reply: Callable[[Message], None]) -> None:
    """The child's half: open the adapter the first command names, then publish each batch
    handed over, in order, on a thread of its own (batches are made into messages as they
    arrive, while the one before waits for its confirms), until ``close``."""
    from console.brokers import get_adapter

    _, config = next_command()
    opened: dict[str, Any] = {}

    def open_adapter() -> None:
        opened["adapter"] = get_adapter(config)

    child_process.answer(reply, open_adapter)
    if "adapter" not in opened:
        return
    adapter = opened["adapter"]
    batches: queue.SimpleQueue[tuple[int, Made, int] | None] = queue.SimpleQueue()

    def publish_batch(ticket: int, messages: Made, window: int) -> None:
        child_process.answer(lambda outcome: reply(("ticket", ticket, outcome)), lambda: [
            (result.key, result.ok, result.error) for result in adapter.publish(messages(), window=window)])

    def publish_in_order() -> None:
        while (batch := batches.get()) is not None:
            publish_batch(*batch)

    publisher = threading.Thread(target=publish_in_order, name="publish", daemon=True)
    at_once: list[threading.Thread] = []
    with adapter:
        publisher.start()
        while (command := next_command())[0] != "close":
            _, ticket, publications, window = command
            if adapter.publishes_concurrently:
                # The adapter sends a call's messages after those of the calls made before it:
                # this batch goes out behind the one before while that one waits for confirms.
                at_once = [thread for thread in at_once if thread.is_alive()]
                at_once.append(threading.Thread(target=publish_batch, args=(ticket, _made(publications), window),
                                                name=f"publish-{ticket}", daemon=True))
                at_once[-1].start()
            else:
                batches.put((ticket, _made(publications), window))
        batches.put(None)
        publisher.join()
        for thread in at_once:
            thread.join()
    reply(("ok", None))


def _made(publications: list[tuple[Any, ...]]) -> Made:
    """The batch's messages, made now (while the batch before waits for its confirms); what
    cannot be made fails the batch when its turn comes."""
    try:
        messages = [to_outgoing(Publication(*p)) for p in publications]
    except Exception as exc:  # noqa: BLE001 - raised in the batch's turn, with its traceback
        failure = exc

        def fail() -> list[Outgoing]:
            raise failure
        return fail
    return lambda: messages


if __name__ == "__main__":
    child_process.main(serve, name=NAME)
