"""A synchronous STOMP 1.2 link to ActiveMQ Classic over stomp.py, every wait bounded.

stomp.py's ``Connection12`` reads frames on its own thread and calls listeners. ``StompLink``
turns that into plain calls: a listener drops every frame into one queue, and the caller's
thread takes them out with a deadline (``wait_receipt``, ``next_message``); writes are bounded
by a socket send timeout. So nothing here can hang longer than its timeout. An ERROR frame or
a dropped connection becomes a BrokerError on the caller's thread; ActiveMQ closes the
connection after an ERROR, so a link is then dead (``alive`` is false) and the adapter opens
a new one.
"""

from __future__ import annotations

import itertools
import queue
import socket
import struct
import time
from collections import deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import stomp
from stomp.exception import StompException

from console.brokers.base import BrokerConfig, BrokerError

DEFAULT_PORT = 61613
#: An unreachable or silent broker is reported within seconds; the job runner does the waiting.
CONNECT_TIMEOUT_SECONDS = 3.0
#: How long a receipt (a commit, a subscription, a disconnect) may take.
RECEIPT_TIMEOUT_SECONDS = 30.0

#: What stomp.py reads from the socket at a time. Its default, 16 KiB, is quadratic for a large
#: body holding NUL bytes (any binary one): every read with a NUL in it appends to the frame so far
#: (a copy of it) and parses it again. A 5 MiB random body took longer to read than a capture
#: waits for its next letter (one second), and the capture ended early; at 1 MiB it is five reads.
RECV_BYTES = 1 << 20

_ids = itertools.count(1)


class _Connection12(stomp.Connection12):  # type: ignore[misc]  # stomp.py ships no type information
    """stomp.py's ``Connection12`` (its connect and disconnect) over a transport reading
    ``RECV_BYTES`` at a time, which its own constructor does not pass on: no reconnecting, no
    heartbeats, bodies left as bytes, content-length set only where we mean it (on ActiveMQ its
    presence turns a TextMessage into a BytesMessage)."""

    def __init__(self, host_and_ports: list[tuple[str, int]], *, timeout: float) -> None:
        transport = stomp.transport.Transport(
            host_and_ports, prefer_localhost=False, try_loopback_connect=False, reconnect_attempts_max=1,
            timeout=timeout, auto_decode=False, recv_bytes=RECV_BYTES,
        )
        stomp.connect.BaseConnection.__init__(self, transport)
        stomp.protocol.Protocol12.__init__(self, transport, heartbeats=(0, 0), auto_content_length=False)


@dataclass(frozen=True)
class Options:
    """``BrokerConfig.options`` for ActiveMQ, with their defaults."""

    #: Dead places named by the operator: always listed, even empty or never seen.
    dead_places: tuple[str, ...] = ()
    #: Prefixes of individual DLQs (``individualDeadLetterStrategy queuePrefix``) besides
    #: ``ActiveMQ.DLQ.Queue.``.
    prefixes: tuple[str, ...] = ("DLQ.",)
    #: Queues whose individual DLQs (``<prefix><queue>``) are probed by discovery.
    known_queues: tuple[str, ...] = ()
    #: How long a browse may wait for the broker's next message before giving up on it.
    browse_timeout: float = 10.0
    #: Counting a place reads its messages; it stops here, and the depth is a lower bound.
    count_limit: int = 10_000

    @classmethod
    def from_config(cls, options: dict[str, Any]) -> Options:
        def names(key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
            value = options.get(key, default)
            if isinstance(value, str):
                value = [value]
            return tuple(str(v) for v in value if str(v).strip())

        try:
            return cls(
                dead_places=names("dead_places"),
                prefixes=names("prefixes", cls.prefixes),
                known_queues=names("known_queues"),
                browse_timeout=float(options.get("browse_timeout", cls.browse_timeout)),
                count_limit=max(1, int(options.get("count_limit", cls.count_limit))),
            )
        except (TypeError, ValueError) as exc:
            raise BrokerError(f"bad ActiveMQ option: {exc}", permanent=True) from None


def server_address(url: str) -> tuple[str, int]:
    """``stomp://host:61613`` -> (host, port)."""
    parts = urlsplit(url)
    if parts.scheme not in ("stomp", "tcp") or not parts.hostname:
        raise BrokerError(f"{url!r} is not a stomp://host:port URL", permanent=True)
    try:
        return parts.hostname, parts.port or DEFAULT_PORT
    except ValueError:
        raise BrokerError(f"{url!r} has a bad port", permanent=True) from None


class _Inbox(stomp.ConnectionListener):  # type: ignore[misc]  # stomp.py ships no type information
    """Runs on stomp.py's thread: only queues what arrived, never decides anything."""

    def __init__(self) -> None:
        self.frames: queue.Queue[tuple[str, Any]] = queue.Queue()

    def on_connected(self, frame: Any) -> None:
        self.frames.put(("connected", frame))

    def on_message(self, frame: Any) -> None:
        self.frames.put(("message", frame))

    def on_receipt(self, frame: Any) -> None:
        self.frames.put(("receipt", frame))

    def on_error(self, frame: Any) -> None:
        self.frames.put(("error", frame))

    def on_disconnected(self) -> None:
        self.frames.put(("disconnected", None))


def _is_security_refusal(text: str) -> bool:
    """ActiveMQ's authentication and authorization plugins refuse with these words; asking
    again will not help."""
    lowered = text.lower()
    return any(word in lowered for word in ("password", "authenticat", "credentials", "not authorized",
                                             "user name", "security"))


class StompLink:
    """One STOMP connection used by one thread at a time."""

    def __init__(self, config: BrokerConfig, *, connect_timeout: float = CONNECT_TIMEOUT_SECONDS) -> None:
        self.host, self.port = server_address(config.url)
        self.where = f"{self.host}:{self.port}"
        self.server = ""
        self.alive = False
        self._inbox = _Inbox()
        self._messages: dict[str, deque[Any]] = {}
        self._receipts: set[str] = set()
        self._conn = _Connection12([(self.host, self.port)], timeout=connect_timeout)
        self._conn.set_listener("dlo", self._inbox)
        self._open(config, connect_timeout)

    def _open(self, config: BrokerConfig, timeout: float) -> None:
        try:
            self._conn.connect(config.username or None, config.password or None, wait=False,
                               with_connect_command=True)
        except (StompException, OSError) as exc:
            self._stop_socket()
            detail = str(exc) or "the connection was refused or timed out"
            raise BrokerError(f"cannot reach ActiveMQ at {self.where}: {detail}") from None
        try:
            kind, frame = self._take(time.monotonic() + timeout, waiting_for="the CONNECTED frame")
        except BrokerError:
            self._stop_socket()
            raise
        if kind == "connected":
            self.server = frame.headers.get("server", "")
            self.alive = True
            self._bound_sends()
            return
        self._stop_socket()
        if kind == "error":
            # Told in our own words: whatever answers at a URL typed into a connection test would
            # otherwise write into the console's page.
            if _is_security_refusal(_error_text(frame)):
                raise BrokerError(f"ActiveMQ at {self.where} refused the login of user "
                                  f"{config.username!r}: wrong username or password", permanent=True)
            raise BrokerError(f"ActiveMQ at {self.where} refused the connection (it answered CONNECT with "
                              "an ERROR frame)")
        raise BrokerError(f"cannot reach ActiveMQ at {self.where}: the connection closed before the broker "
                          f"answered (is this its STOMP port?)")

    def _bound_sends(self) -> None:
        """stomp.py leaves its socket blocking with no timeout: a broker that stops reading
        (producer flow control, a hung process) would hold a send for ever. A send timeout at
        the socket level bounds writes only; reads stay untimed, which an idle capture needs."""
        sock = getattr(self._conn.transport, "socket", None)
        if sock is None:
            return
        try:
            seconds = int(RECEIPT_TIMEOUT_SECONDS)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", seconds, 0))
        except (AttributeError, OSError, struct.error):
            pass  # a platform without SO_SNDTIMEO: the receipt waits still bound every call

    # -- waiting for frames ----------------------------------------------------------------

    def _take(self, deadline: float, *, waiting_for: str) -> tuple[str, Any]:
        """The next frame event, or a BrokerError once ``deadline`` passes."""
        remaining = deadline - time.monotonic()
        try:
            return self._inbox.frames.get(timeout=max(0.0, remaining))
        except queue.Empty:
            self.alive = False
            raise BrokerError(f"ActiveMQ at {self.where} did not send {waiting_for} in time") from None

    def _pump(self, deadline: float, *, waiting_for: str) -> bool:
        """Handle one frame event; False when the deadline passed with none."""
        try:
            kind, frame = self._inbox.frames.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return False
        if kind == "message":
            self._file(frame)
        elif kind == "receipt":
            self._receipts.add(frame.headers.get("receipt-id", ""))
        elif kind == "error":
            self.alive = False
            self._stop_socket()
            text = _error_text(frame)
            raise BrokerError(f"ActiveMQ at {self.where} refused {waiting_for}: {text}",
                              permanent=_is_security_refusal(text))
        elif kind == "disconnected":
            self.alive = False
            raise BrokerError(f"lost the connection to ActiveMQ at {self.where} waiting for {waiting_for}")
        return True

    def _file(self, frame: Any) -> None:
        """A MESSAGE frame, under its subscription until it is taken."""
        self._messages.setdefault(frame.headers.get("subscription", ""), deque()).append(frame)

    def next_message(self, subscription: str, timeout: float) -> Any | None:
        """The next MESSAGE frame of a subscription, or None after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        waiting = self._messages.setdefault(subscription, deque())
        while not waiting:
            if not self._pump(deadline, waiting_for="a message"):
                return None
        return waiting.popleft()

    def wait_receipt(self, receipt: str, what: str, timeout: float = RECEIPT_TIMEOUT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while receipt not in self._receipts:
            if not self._pump(deadline, waiting_for=what):
                self.alive = False
                raise BrokerError(f"ActiveMQ at {self.where} did not confirm {what} in time")
        self._receipts.discard(receipt)

    # -- frames out ------------------------------------------------------------------------

    def new_id(self, prefix: str) -> str:
        return f"dlo-{prefix}-{next(_ids)}"

    def send_frame(self, command: str, headers: dict[str, Any], body: bytes = b"") -> None:
        if not self.alive:
            raise BrokerError(f"the connection to ActiveMQ at {self.where} is closed")
        try:
            self._conn.send_frame(command, dict(headers), body)
        except (StompException, OSError) as exc:
            self.alive = False
            raise BrokerError(f"lost the connection to ActiveMQ at {self.where}: {exc}") from None

    def confirmed(self, command: str, headers: dict[str, Any], what: str, body: bytes = b"") -> None:
        """Send a frame with a receipt header and wait for the broker's RECEIPT."""
        receipt = self.new_id("receipt")
        self.send_frame(command, {**headers, "receipt": receipt}, body)
        self.wait_receipt(receipt, what)

    def subscribe(self, destination: str, headers: dict[str, Any]) -> str:
        sub_id = self.new_id("sub")
        self.confirmed("SUBSCRIBE", {**headers, "destination": destination, "id": sub_id},
                       f"the subscription to {destination}")
        return sub_id

    def unsubscribe(self, sub_id: str) -> None:
        self.confirmed("UNSUBSCRIBE", {"id": sub_id}, "the end of a subscription")
        self._messages.pop(sub_id, None)

    def close(self) -> None:
        """DISCONNECT (waiting briefly for its receipt) and close the socket. Safe twice."""
        if self.alive:
            self.alive = False
            try:
                receipt = self.new_id("bye")
                self._conn.send_frame("DISCONNECT", {"receipt": receipt})
                deadline = time.monotonic() + CONNECT_TIMEOUT_SECONDS
                while receipt not in self._receipts and self._pump(deadline, waiting_for="the disconnect"):
                    pass
            except (BrokerError, StompException, OSError):
                pass  # closing anyway
        self._stop_socket()

    def _stop_socket(self) -> None:
        self.alive = False
        try:
            self._conn.transport.disconnect_socket()
        except (StompException, OSError):
            pass


def _error_text(frame: Any) -> str:
    message = str(frame.headers.get("message", "")).strip()
    body = frame.body.decode("utf-8", "replace") if isinstance(frame.body, bytes) else str(frame.body or "")
    first = body.strip().splitlines()[0] if body.strip() else ""
    return message or first or "error without a message"
