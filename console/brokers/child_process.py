"""An adapter's work in a child process, driven by the parent over the child's stdin and
stdout with pickled commands and replies, so that the broker's client (decoding and encoding
frames) does not share one interpreter lock with the worker preparing and storing letters.

Two kinds of child use it: a capture's reader (console.brokers.capture_process) and a replay's
publisher (console.brokers.publish_process). The first command opens the child's broker work;
every reply is ``("ok", value)``, ``("broker_error", message, permanent)`` or
``("failed", traceback)``. The child exits as soon as its stdin closes, so a parent killed at
any point takes its child with it, and the broker takes back whatever the child held.

A child that closes leaves a spare in its place: the same module started again, with its
broker's client library imported, waiting for its first command (its start-up, most of it
importing the client, no longer on the next job's path; see benchmarks/README.md,
child_start.py). The spare is
started after the child closed, so the job that used it does not share its cores with the
import. A spare names itself ``dlo-spare`` (``/proc/<pid>/comm``) until it is given work, then
takes its role's name (``dlo-reader``, ``dlo-publisher``); it exits with its parent like any child.
"""

from __future__ import annotations

import fcntl
import importlib
import io
import os
import pickle
import queue
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, cast

from console.brokers.base import BrokerError
from console.malloc import give_back_large_blocks

PROJECT_ROOT = Path(__file__).resolve().parents[2]

#: How long a closing child may take before it is killed.
CLOSE_SECONDS = 10.0

#: What a child started ahead calls itself until it is given work.
SPARE_NAME = "dlo-spare"

#: A command or a reply: a tuple whose first item says what it is.
Message = tuple[Any, ...]

_spares: dict[tuple[str, str], subprocess.Popen[bytes]] = {}
_spares_lock = threading.Lock()


def _spawn(module: str, preload: str) -> subprocess.Popen[bytes]:
    """``python -m <module> <preload>``: it imports ``preload`` (an adapter's module), then
    waits for its first command."""
    process = subprocess.Popen(
        [sys.executable, "-m", module, preload], stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
        bufsize=0, cwd=PROJECT_ROOT,  # where ``console`` is importable, whatever the worker's directory
    )
    _widen(pipes(process)[1])
    return process


def pipes(process: subprocess.Popen[bytes]) -> tuple[BinaryIO, io.RawIOBase]:
    """A child's stdin and stdout. Started with both piped and ``bufsize=0``, a child always has
    them, unbuffered (``io.FileIO``), which the type stubs of ``Popen`` cannot know."""
    return cast(BinaryIO, process.stdin), cast(io.RawIOBase, process.stdout)


def _take(module: str, preload: str) -> subprocess.Popen[bytes]:
    """The spare started for ``module`` and ``preload`` if it is still there, or a new child."""
    with _spares_lock:
        spare = _spares.pop((module, preload), None)
    if spare is not None and spare.poll() is None:
        return spare
    return _spawn(module, preload)


def start_spare(module: str, preload: str) -> None:
    """A child for ``module`` and ``preload`` started ahead, for the next one asked for."""
    with _spares_lock:
        spare = _spares.get((module, preload))
        if spare is None or spare.poll() is not None:
            _spares[(module, preload)] = _spawn(module, preload)


def adapter_module(kind: str) -> str:
    """The module of a broker kind's adapter, which a child for that broker imports ahead."""
    from console.brokers.registry import KINDS

    return KINDS.dotted(kind).rpartition(".")[0]


class Child:
    """The parent's half: a child running ``python -m <module>``, opened by ``first``."""

    #: What the child is, for the messages that say it died ("the capture's reader process").
    role = "child process"

    def __init__(self, module: str, first: Message, *, kind: str, subject: str) -> None:
        """``kind``: the broker's, whose adapter the child imports."""
        self.subject = subject  # what it works on, for messages
        self._module, self._first, self._preload = module, first, adapter_module(kind)
        self._lock = threading.Lock()
        self._start()

    def _start(self) -> None:
        self._process = _take(self._module, self._preload)
        try:
            self.call(self._first)
        except BaseException:
            self._stop()
            raise

    def restart_if_gone(self) -> None:
        """A child that died is replaced by a new one, opened the same way (for children that
        hold nothing between calls)."""
        if self._process.poll() is not None:
            self._stop()
            self._start()

    def call(self, command: Message) -> Any:
        stdin, stdout = pipes(self._process)
        with self._lock:
            try:
                send(stdin, command)
                reply = receive(stdout)
            except (OSError, EOFError, pickle.UnpicklingError, ValueError):
                raise self._died() from None
        kind, *rest = reply
        if kind == "ok":
            return rest[0]
        if kind == "broker_error":
            message, permanent = rest
            raise BrokerError(message, permanent=permanent)
        raise RuntimeError(f"the {self.role} failed:\n{rest[0]}")

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self.call(("close",))
            except BrokerError:
                pass  # a child that is gone has let go of everything already
        self._stop()
        self.leave_spare()

    def leave_spare(self) -> None:
        """A spare for the next child like this one (the child is closed: its cores are free)."""
        start_spare(self._module, self._preload)

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
        return BrokerError(f"the {self.role} for {self.subject} {status}; {self.after_death}", permanent=False)

    #: What became of the child's work when it died, for the message.
    after_death = "what it held goes back to the broker"

    def _stop(self) -> None:
        for pipe in pipes(self._process):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            self._process.wait(CLOSE_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def answer(reply: Callable[[Message], None], work: Callable[[], Any]) -> None:
    """Reply with what ``work`` returns, or with the error it raised."""
    try:
        value = work()
    except BrokerError as exc:
        reply(("broker_error", exc.message, exc.permanent))
    except Exception:  # noqa: BLE001 - the parent raises it with this traceback
        reply(("failed", traceback.format_exc()))
    else:
        reply(("ok", value))


def send(stream: BinaryIO, message: Message) -> None:
    """One pickled message, its length first, in as few writes as the pipe allows: each write
    lets go of the interpreter lock, and getting it back can wait for a busy thread (up to
    ``sys.getswitchinterval()``), so a batch written in small pieces crawls."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(8, "big") + data)
    while view:
        view = view[stream.write(view):]


def receive(stream: io.RawIOBase) -> Message:
    """The next message ``send`` wrote; EOFError when the other end is gone."""
    size = int.from_bytes(_read_exactly(stream, 8), "big")
    message: Message = pickle.loads(_read_exactly(stream, size))
    return message


def _read_exactly(stream: io.RawIOBase, size: int) -> bytearray:
    data = bytearray(size)
    view = memoryview(data)
    while view:
        count = stream.readinto(view)
        if not count:
            raise EOFError("the other end of the child's pipe is gone")
        view = view[count:]
    return data


def _widen(stream: io.RawIOBase) -> None:
    """A pipe that holds a whole batch, where Linux allows it (1 MiB unprivileged, by default)."""
    if hasattr(fcntl, "F_SETPIPE_SZ"):
        try:
            fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass  # a smaller pipe only means more writes


def main(serve: Callable[[Callable[[], Message], Callable[[Message], None]], None], *, name: str) -> None:
    """The child's side: ``serve(next_command, reply)`` until it returns or stdin closes;
    ``name`` is what the child calls itself once it has work (``/proc/<pid>/comm``)."""
    give_back_large_blocks()
    _call_self(SPARE_NAME)
    if len(sys.argv) > 1:
        try:
            importlib.import_module(sys.argv[1])  # the broker's client, while no one waits
        except Exception:  # noqa: BLE001 - opening the broker's work imports it again, and says why it fails
            pass
    commands = os.fdopen(0, "rb", buffering=0)
    replies: BinaryIO = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # stray prints go to stderr, never into the replies
    inbox: queue.SimpleQueue[Message] = queue.SimpleQueue()

    def listen() -> None:
        while True:
            try:
                inbox.put(receive(commands))
            except (EOFError, OSError, pickle.UnpicklingError):
                os._exit(0)  # the parent is gone: the broker takes back what we hold

    threading.Thread(target=listen, name="child-commands", daemon=True).start()

    named = False

    def next_command() -> Message:
        nonlocal named
        command = inbox.get()
        if not named:
            _call_self(name)  # a spare no longer: it has work
            named = True
        return command

    serve(next_command, lambda message: send(replies, message))


def _call_self(name: str) -> None:
    """The process's name as ``ps`` and ``/proc/<pid>/comm`` show it (Linux; elsewhere none)."""
    try:
        with open("/proc/self/comm", "w") as comm:
            comm.write(name)
    except OSError:
        pass
