"""The adapter contract every broker implements, and the values that cross it.

An adapter knows one broker's wire protocol and nothing of Django. It offers a few primitives
(check, discover, open a capture session, publish with confirms) and declares what it can do
as class attributes; the services and the UI read those flags instead of branching on kinds.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from console.letters.envelope import FailureEnvelope
from console.letters.policy import DeliveryPolicy
from console.letters.tables import LetterTable


class BrokerError(Exception):
    """Anything that went wrong talking to a broker.

    ``permanent`` says whether trying again can help: wrong credentials or a missing queue are
    permanent; a refused connection or a dropped channel are not.
    """

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.permanent = permanent


@dataclass(frozen=True)
class BrokerConfig:
    """How to reach one broker. ``password`` is the decrypted secret; never log it."""

    kind: str
    url: str
    management_url: str = ""
    username: str = ""
    password: str = field(default="", repr=False)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlaceRef:
    """Names a dead place on a broker: ``scope`` is a vhost, stream or namespace."""

    name: str
    scope: str = ""


@dataclass
class PlaceInfo:
    """What discovery found about one dead place."""

    name: str
    scope: str = ""
    kind: str = "queue"
    discovered_by: str = "convention"  # argument, policy, binding, convention, advisory, manual
    origins: list[str] = field(default_factory=list)
    depth: int | None = None
    oldest_at: datetime | None = None
    consumers: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> PlaceRef:
        return PlaceRef(self.name, self.scope)


@dataclass
class Received:
    """One message taken from a dead place, not yet acknowledged.

    ``headers`` and ``properties`` hold broker values as decoded by the client (bytes,
    datetimes, decimals, nested tables); ``console.letters.values`` turns them into JSON.
    ``token`` is the adapter's handle to acknowledge it.
    """

    token: Any
    body: bytes
    headers: dict[str, Any]
    properties: dict[str, Any]
    envelope: FailureEnvelope
    redelivered: bool = False
    message_id: str = ""
    #: The broker names this death once: the same custody key told again, however much later,
    #: is the same death, matched to its letter (console.models.UniqueDeath says why NATS needs it).
    once: bool = False


@dataclass
class Outgoing:
    """One message to publish. ``key`` is the caller's id for it (a letter id)."""

    key: Any
    destination: str
    body: bytes
    headers: dict[str, Any]
    properties: dict[str, Any]
    scope: str = ""


@dataclass
class PublishResult:
    key: Any
    ok: bool
    error: str = ""


@dataclass
class ServerMove:
    """A whole-place move the broker runs by itself (RabbitMQ's shovel), as the broker reports it.

    ``count`` is how many messages it moves before it removes itself; ``state`` is the broker's
    own word for how it is doing (``starting``, ``running``, ``terminated``...), with its
    explanation, if it gave one, in ``details``. ``resend_window`` is how many messages it may
    send twice when the broker restarts or its connection drops (it delivers at least once).
    """

    name: str
    source: str
    destination: str
    count: int | None = None
    state: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    resend_window: int = 0


class CaptureSession:
    """Takes messages from one dead place in batches; acknowledges only what the caller
    committed. Closing it hands every unacknowledged message back to the broker."""

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        raise NotImplementedError

    def ack(self, batch: Sequence[Received]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> CaptureSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PlaceReader:
    """Reads the places it is told to follow, each at most ``per_place`` messages ahead."""

    def __init__(self, adapter: Adapter, *, per_place: int) -> None:
        self.adapter = adapter
        self.per_place = max(1, per_place)

    def follow(self, places: Collection[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        """Read exactly these places from now on: subscribe to the new ones; for those no
        longer named, hand what is in hand back to the broker unacknowledged and stop reading
        them (another reader, or a capture, may read them next). Returns the places that could
        not be followed and why (a queue that is gone: ``permanent``); they are left out, and
        named again by the keeper later. A lost connection raises BrokerError."""
        raise NotImplementedError

    def take(self, max_count: int, wait_seconds: float) -> dict[PlaceRef, list[Received]]:
        """Messages in hand, at most ``per_place`` of one place and ``max_count`` in all, the
        places taken in turn (a stream into one never starves the others); waits up to
        ``wait_seconds`` for the first one, and returns {} when none came. The messages stay
        the reader's, unacknowledged, until ``ack``. A lost connection raises BrokerError:
        the keeper then closes the reader and opens another, and what was unacknowledged comes
        back redelivered."""
        raise NotImplementedError

    def ack(self, place: PlaceRef, messages: Sequence[Received]) -> None:
        """Acknowledge messages of one place whose copies are committed; returns once the broker
        has them (a round trip where the acknowledgement itself has no answer), as
        CaptureSession.ack."""
        raise NotImplementedError

    def ack_all(self, taken: Mapping[PlaceRef, Sequence[Received]]) -> None:
        """Acknowledge what one take gave, of every place in it (``ack`` of each, where the
        reader has no one call for them all); returns once the broker has them all. A
        BrokerError leaves it unknown which were: their copies stay pending, and match their
        messages if those come back."""
        for place, messages in taken.items():
            self.ack(place, messages)

    def settled(self, place: PlaceRef) -> bool:
        """True when nothing of the place waits on the broker, is on its way to this reader or
        is held unacknowledged by anyone: copies an interrupted capture committed whose
        messages were acknowledged after all may then be forgotten
        (console.services.custody.mark_place_acked). Asked only for places with such copies,
        when they have been quiet a while. Answering False when unsure is always safe."""
        raise NotImplementedError

    def close(self) -> None:
        """Hand everything unacknowledged back and release the connection. Safe to call twice."""

    def __enter__(self) -> PlaceReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Adapter:
    """Base of every broker adapter. Subclasses set ``kind`` and the capability flags."""

    kind: ClassVar[str] = ""
    label: ClassVar[str] = ""
    #: Browsing leaves the message exactly as it was (no delivery count, order or loss).
    can_peek_safely: ClassVar[bool] = False
    #: The broker can move a whole place by itself (RabbitMQ's shovel).
    can_move_server_side: ClassVar[bool] = False
    #: Letters can be published to a chosen destination, not just their origin.
    can_move_to_destination: ClassVar[bool] = True
    #: ``publish`` may be called from several threads at once; the messages of the call made
    #: first go out first (a replay's publisher process then overlaps one batch's confirms
    #: with the next batch's publishes).
    publishes_concurrently: ClassVar[bool] = False
    #: Discovery needs a second, HTTP address (RabbitMQ's management API): forms ask for it.
    uses_management_url: ClassVar[bool] = False
    #: The broker lives in this process (the in-memory one): no other process can reach it.
    in_process: ClassVar[bool] = False
    #: What the broker form shows for this kind: a connection string to follow and, where
    #: ``uses_management_url``, what that second address is (plain text; the pages render it).
    url_example: ClassVar[str] = ""
    management_url_help: ClassVar[str] = ""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config

    @classmethod
    def capabilities(cls) -> dict[str, bool]:
        return {
            "peek": cls.can_peek_safely,
            "server_side_move": cls.can_move_server_side,
            "move": cls.can_move_to_destination,
        }

    @classmethod
    def letter_tables(cls, envelope_details: dict[str, Any], headers: dict[str, Any]) -> list[LetterTable]:
        """Tables of what this broker writes on a letter (RabbitMQ's x-death), read from the
        letter's envelope details and headers (tagged JSON), for its page; none by default."""
        return []

    def check(self) -> dict[str, Any]:
        """Connect and authenticate; return facts such as ``{"version": ...}``."""
        raise NotImplementedError

    def discover(self) -> list[PlaceInfo]:
        raise NotImplementedError

    def stats(self, place: PlaceRef) -> PlaceInfo:
        """Depth, consumers and oldest message of one place, without touching messages."""
        raise NotImplementedError

    def depths(self, places: Sequence[PlaceRef]) -> dict[PlaceRef, int | None]:
        """How many messages wait in each place (None where the broker does not tell); a place
        that does not exist is left out. The keeper asks this for every place it keeps at every
        poll: an adapter that can answer for many places at once does."""
        found: dict[PlaceRef, int | None] = {}
        for place in places:
            try:
                found[place] = self.stats(place).depth
            except BrokerError as exc:
                if not exc.permanent:
                    raise
        return found

    def open_capture(self, place: PlaceRef, *, prefetch: int) -> CaptureSession:
        raise NotImplementedError

    def settled(self, place: PlaceRef) -> bool:
        """Asked after a capture drained the place: True when nothing of it is held out
        unacknowledged either, so copies an interrupted capture committed whose messages were
        acknowledged after all may be forgotten (console.services.custody.mark_place_acked).
        An empty place says so on most brokers; one whose counts cannot be trusted says False
        when unsure, which is always safe."""
        return True

    def open_reader(self, *, per_place: int) -> PlaceReader:
        """The keeper's long-lived reader over many places of this broker
        (console.brokers.readers), at most ``per_place`` messages of each ahead: one that reads
        messages as the broker pushes them where it does; else
        ``console.brokers.readers.SessionReader``, which asks the depths of all its places in
        one call and reads those holding messages through capture sessions."""
        raise NotImplementedError

    def peek(self, place: PlaceRef, limit: int) -> list[Received]:
        raise BrokerError(f"{self.kind} cannot browse without changing messages", permanent=True)

    def publish(self, messages: Iterable[Outgoing], *, window: int) -> list[PublishResult]:
        """Publish with the broker's confirmation; a result per message, in input order.

        ``ok`` is true only when the broker confirmed the message was routed and stored.
        """
        raise NotImplementedError

    def delivery_policy(self, origin: PlaceRef) -> DeliveryPolicy:
        """What the broker tells of how often a message is delivered in ``origin`` (a
        subscription queue, consumer or stream, in its scope) before it dies, and where it goes
        then (console.letters.policy). By default the broker tells nothing.

        ``dead_places`` decides where users limited to places may publish (console.access.topology):
        list only the places the broker's own topology, or its fixed naming, sends the origin's
        dead letters to, never what a letter's headers say."""
        return DeliveryPolicy(told=False)

    def delivery_policies(self, origins: Sequence[PlaceRef]) -> list[DeliveryPolicy]:
        """``delivery_policy`` of each origin, in order; adapters that read a whole topology to
        answer one (RabbitMQ) read it once for all."""
        return [self.delivery_policy(origin) for origin in origins]

    # -- server-side moves (only where ``can_move_server_side``) --------------------------------

    def start_server_move(self, place: PlaceRef, destination: str, *, name: str, count: int) -> ServerMove:
        """Have the broker move the first ``count`` messages of ``place`` to the queue
        ``destination`` (in the place's scope) by itself, under ``name``; the move removes itself
        once it has moved them. A move of that name already there is returned, not started twice,
        so a job resumed after its worker died finds its own."""
        raise self._cannot_move_server_side()

    def server_move(self, place: PlaceRef, name: str) -> ServerMove | None:
        """The move ``name`` as the broker reports it, or None once it has removed itself (or
        was removed)."""
        raise self._cannot_move_server_side()

    def stop_server_move(self, place: PlaceRef, name: str) -> None:
        """Remove the move; what it has moved stays moved. Removing one that is gone is no error."""
        raise self._cannot_move_server_side()

    def _cannot_move_server_side(self) -> BrokerError:
        return BrokerError(f"{self.label or self.kind} cannot move a whole place on the broker by itself",
                           permanent=True)

    def close(self) -> None:
        """Release connections. Safe to call twice."""

    def __enter__(self) -> Adapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
