"""A capture session read in a child process (console.brokers.child_process), so that reading
and decoding the broker's messages does not share one interpreter lock with storing them.

The child opens the adapter's own capture session, takes batches and acknowledges them as the
parent says, exactly as it would in process. It also makes each batch's letter rows
(console.letters.rows: custody key, envelope, JSON text), so that what crosses the pipe
is plain values, cheap to unpickle. A message's token is replaced by a number the child maps
back to the adapter's token (which may not survive pickling). Killed, or left by its parent,
the child takes nothing with it: the broker hands every unacknowledged message back to the
queue.

    python -m console.brokers.capture_process <adapter module>   (started by ChildCapture, never by hand)
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from console.brokers import child_process
from console.brokers.base import BrokerConfig, CaptureSession, PlaceRef, Received
from console.brokers.batch_sizing import BatchSizer
from console.brokers.child_process import Message
from console.letters.rows import Arrival, prepared

#: What a reader calls itself (``ps``, ``/proc/<pid>/comm``).
NAME = "dlo-reader"

#: A batch as the child hands it over: each message's (number, redelivered, replay id), and
#: its letter's columns.
Rows = tuple[list[tuple[int, bool, str, bool]], list[dict[str, Any]]]


class ChildCapture(child_process.Child, CaptureSession):
    """The parent's half: a capture session whose broker connection lives in a child."""

    role = "capture's reader process"
    after_death = "unacknowledged messages go back to the queue"

    def __init__(self, config: BrokerConfig, place: PlaceRef, *, prefetch: int,
                 sizer: BatchSizer | None = None) -> None:
        """``sizer`` sizes the batches the child takes ahead (as the caller sizes its own)."""
        self.place = place
        sizing = (sizer.max_count, sizer.max_bytes) if sizer is not None else (prefetch, 1 << 62)
        super().__init__(__name__, ("open", config, place, prefetch, sizing), kind=config.kind,
                         subject=repr(place.name))

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        batch: list[Received] = self.call(("next", max_count, wait_seconds))
        return batch

    def next_prepared(self, max_count: int, wait_seconds: float,
                      fixed: dict[str, Any]) -> tuple[list[Arrival], list[dict[str, Any]]]:
        """The next batch as ``console.letters.rows.prepared`` makes it, made in the child."""
        arrivals: list[tuple[int, bool, str, bool]]
        rows: list[dict[str, Any]]
        arrivals, rows = self.call(("rows", max_count, wait_seconds, fixed))
        return [Arrival._make(arrival) for arrival in arrivals], rows

    def ack(self, batch: Sequence[Received]) -> None:
        self.call(("ack", [message.token for message in batch]))


def serve(next_command: Callable[[], Message], reply: Callable[[Message], None]) -> None:
    """The child's half: open the capture the first command names, then answer commands
    until ``close``."""
    from console.brokers import get_adapter

    _, config, place, prefetch, (max_count, max_bytes) = next_command()
    opened: dict[str, Any] = {}

    def open_capture() -> None:
        opened["adapter"] = get_adapter(config)
        opened["session"] = opened["adapter"].open_capture(place, prefetch=prefetch)

    child_process.answer(reply, open_capture)
    if "session" not in opened:
        return
    adapter, session = opened["adapter"], opened["session"]
    held: dict[int, Received] = {}
    numbers = itertools.count()

    def hold(batch: list[Received]) -> list[tuple[int, Received]]:
        """Each message numbered, and kept under its number until it is acknowledged."""
        numbered = list(zip(numbers, batch, strict=False))  # numbers never ends
        held.update(numbered)
        return numbered

    def next_batch(max_count: int, wait_seconds: float) -> list[Received]:
        return [dataclasses.replace(message, token=number)
                for number, message in hold(session.next_batch(max_count, wait_seconds))]

    def rows(max_count: int, wait_seconds: float, fixed: dict[str, Any]) -> Rows:
        numbered = hold(session.next_batch(max_count, wait_seconds))
        arrivals, letter_rows = prepared((message for _, message in numbered), fixed)
        return [(number, arrival.redelivered, arrival.replay_id, arrival.once)
                for (number, _), arrival in zip(numbered, arrivals, strict=True)], letter_rows

    ahead = ReadAhead(rows, BatchSizer(max_count, max_bytes))

    def ack(numbers_acked: list[int]) -> None:
        session.ack([held[number] for number in numbers_acked])
        for number in numbers_acked:
            del held[number]

    commands: dict[str, Callable[..., Any]] = {"next": next_batch, "rows": ahead.rows, "ack": ack}
    try:
        with adapter, session:
            while (command := next_command())[0] != "close":
                kind, *args = command
                child_process.answer(reply, lambda: commands[kind](*args))  # noqa: B023 - called at once
    finally:
        ahead.stop()  # the session is closed: a read under way ends
    reply(("ok", None))


class ReadAhead:
    """Batches of rows taken one ahead: as soon as one is handed over, the next (sized by its
    bodies, as the caller sizes its batches) is taken and made on a thread of its own, while the
    parent stores the one before, so the reader does not wait for the parent's next command to
    start on it. A batch taken ahead is only held, never acknowledged, until the parent asks for
    it; one larger than the parent asks for is handed over in parts; one the parent never asks
    for goes back to the queue when the session closes. An empty batch is not kept: the next
    command looks again."""

    def __init__(self, make: Callable[[int, float, dict[str, Any]], Rows], sizer: BatchSizer) -> None:
        self._make = make
        self._sizer = sizer
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="read-ahead")
        self._ahead: Future[Rows] | None = None
        self._left: Rows = ([], [])

    def rows(self, max_count: int, wait_seconds: float, fixed: dict[str, Any]) -> Rows:
        arrivals, rows = self._left
        if not arrivals and self._ahead is not None:
            taken, self._ahead = self._ahead, None
            arrivals, rows = taken.result()  # the error a read ahead met is this command's
        if not arrivals:
            arrivals, rows = self._make(max_count, wait_seconds, fixed)
        self._left = (arrivals[max_count:], rows[max_count:])
        if arrivals and not self._left[0]:
            # Sized by these bodies, as the caller sizes its next batch: not the first small one again.
            self._sizer.saw([row["body_size"] for row in rows])
            self._ahead = self._pool.submit(self._make, self._sizer.next_count(), wait_seconds, fixed)
        return arrivals[:max_count], rows[:max_count]

    def stop(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


if __name__ == "__main__":
    child_process.main(serve, name=NAME)
