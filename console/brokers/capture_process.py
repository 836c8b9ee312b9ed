"""A capture session read in a child process, so that reading and decoding the broker's
messages does not share one interpreter lock with preparing and storing them.

The parent drives the child over its stdin and stdout with pickled commands and replies: it
opens the adapter's own capture session there, takes batches and acknowledges them, exactly as
it would in process. A message crosses with its token replaced by a number the child maps back
to the adapter's token (which may not survive pickling). The child exits as soon as its stdin
closes, so a parent killed at any point takes its child with it, and the broker hands every
unacknowledged message back to the queue.

    python -m console.brokers.capture_process    (started by ChildCapture, never by hand)
"""

from __future__ import annotations

import dataclasses
import fcntl
import itertools
import os
import pickle
import queue
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from console.brokers.base import BrokerConfig, BrokerError, CaptureSession, PlaceRef, Received
from console.malloc import give_back_large_blocks

PROJECT_ROOT = Path(__file__).resolve().parents[2]

#: How long a closing child may take before it is killed (its messages go back either way).
CLOSE_SECONDS = 10.0


class ChildCapture(CaptureSession):
    """The parent's half: a capture session whose broker connection lives in a child."""

    def __init__(self, config: BrokerConfig, place: PlaceRef, *, prefetch: int) -> None:
        self.place = place
        self._lock = threading.Lock()
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
            bufsize=0, cwd=PROJECT_ROOT,  # where ``console`` is importable, whatever the worker's directory
        )
        _widen(self._process.stdout)
        try:
            self._call(("open", config, place, prefetch))
        except BaseException:
            self._stop()
            raise

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        return self._call(("next", max_count, wait_seconds))

    def ack(self, batch: Sequence[Received]) -> None:
        self._call(("ack", [message.token for message in batch]))

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._call(("close",))
            except BrokerError:
                pass  # a child that is gone has handed its messages back already
        self._stop()

    def _call(self, command: tuple) -> Any:
        with self._lock:
            try:
                send(self._process.stdin, command)
                reply = receive(self._process.stdout)
            except (OSError, EOFError, pickle.UnpicklingError, ValueError):
                raise self._died() from None
        kind, *rest = reply
        if kind == "ok":
            return rest[0]
        if kind == "broker_error":
            message, permanent = rest
            raise BrokerError(message, permanent=permanent)
        raise RuntimeError(f"the capture's reader process failed:\n{rest[0]}")

    def _died(self) -> BrokerError:
        try:
            code = self._process.wait(2)  # its pipe closed as it died: let it be reaped
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            status = "stopped answering"
        elif code < 0:
            status = f"was killed (signal {-code})"
        else:
            status = f"exited with status {code}"
        return BrokerError(f"the capture's reader process for {self.place.name!r} {status}; unacknowledged "
                           "messages go back to the queue", permanent=False)

    def _stop(self) -> None:
        for pipe in (self._process.stdin, self._process.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            self._process.wait(CLOSE_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def send(stream: BinaryIO, message: tuple) -> None:
    """One pickled message, its length first, in as few writes as the pipe allows: each write
    lets go of the interpreter lock, and getting it back can wait for a busy thread (up to
    ``sys.getswitchinterval()``), so a batch written in small pieces crawls."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(8, "big") + data)
    while view:
        view = view[stream.write(view):]


def receive(stream: BinaryIO) -> tuple:
    """The next message ``send`` wrote; EOFError when the other end is gone."""
    size = int.from_bytes(_read_exactly(stream, 8), "big")
    return pickle.loads(_read_exactly(stream, size))


def _read_exactly(stream: BinaryIO, size: int) -> bytearray:
    data = bytearray(size)
    view = memoryview(data)
    while view:
        count = stream.readinto(view)
        if not count:
            raise EOFError("the other end of the capture's pipe is gone")
        view = view[count:]
    return data


def _widen(stream: BinaryIO) -> None:
    """A pipe that holds a whole batch, where Linux allows it (1 MiB unprivileged, by default)."""
    if hasattr(fcntl, "F_SETPIPE_SZ"):
        try:
            fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass  # a smaller pipe only means more writes


def serve(next_command: Callable[[], tuple], reply: Callable[[tuple], None]) -> None:
    """The child's half: open the capture the first command names, then answer commands
    until ``close``."""
    from console.brokers import get_adapter

    _, config, place, prefetch = next_command()
    try:
        adapter = get_adapter(config)
        session = adapter.open_capture(place, prefetch=prefetch)
    except BrokerError as exc:
        reply(("broker_error", exc.message, exc.permanent))
        return
    except Exception:  # noqa: BLE001 - the parent raises it with this traceback
        reply(("failed", traceback.format_exc()))
        return
    held: dict[int, Received] = {}
    numbers = itertools.count()
    reply(("ok", None))
    with adapter, session:
        while True:
            kind, *args = next_command()
            if kind == "close":
                break
            try:
                if kind == "next":
                    batch = session.next_batch(*args)
                    out = []
                    for message in batch:
                        number = next(numbers)
                        held[number] = message
                        out.append(dataclasses.replace(message, token=number))
                    reply(("ok", out))
                elif kind == "ack":
                    session.ack([held[number] for number in args[0]])
                    for number in args[0]:
                        del held[number]
                    reply(("ok", None))
            except BrokerError as exc:
                reply(("broker_error", exc.message, exc.permanent))
            except Exception:  # noqa: BLE001 - the parent raises it with this traceback
                reply(("failed", traceback.format_exc()))
    reply(("ok", None))


def main() -> None:
    give_back_large_blocks()
    commands = os.fdopen(0, "rb", buffering=0)
    replies: BinaryIO = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # stray prints go to stderr, never into the replies
    inbox: queue.SimpleQueue = queue.SimpleQueue()

    def listen() -> None:
        while True:
            try:
                inbox.put(receive(commands))
            except (EOFError, OSError, pickle.UnpicklingError):
                os._exit(0)  # the parent is gone: the broker takes back what we hold

    threading.Thread(target=listen, name="capture-commands", daemon=True).start()
    serve(inbox.get, lambda message: send(replies, message))


if __name__ == "__main__":
    main()
