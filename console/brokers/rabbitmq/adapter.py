"""The RabbitMQ adapter: a synchronous face over aio-pika (AMQP) and httpx (management API).

AMQP work runs on a private event loop on a background thread owned by the adapter, so the
public methods are plain blocking calls that Django code (whose ORM must not run inside an
event loop) can make. One AMQP connection per vhost, opened on first use.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import unquote

import aio_pika
import aiormq.exceptions as amqp_errors
from yarl import URL

from console.brokers.asyncloop import LoopThread
from console.brokers.base import (
    Adapter,
    BrokerConfig,
    BrokerError,
    CaptureSession,
    Outgoing,
    PlaceInfo,
    PlaceReader,
    PlaceRef,
    PublishResult,
    ServerMove,
)
from console.brokers.rabbitmq.capture import QueueConsumer, RabbitCapture
from console.brokers.rabbitmq.death_table import x_death_tables
from console.brokers.rabbitmq.discovery import (
    Topology,
    find_dead_places,
    timestamp_seconds,
)
from console.brokers.rabbitmq.frames import use_lean_frames
from console.brokers.rabbitmq.management import ManagementAPI
from console.brokers.rabbitmq.policy import origin_policy
from console.brokers.rabbitmq.publisher import ConfirmWindowPublisher
from console.brokers.rabbitmq.reader import RabbitReader
from console.brokers.rabbitmq.shovel import find_shovel, start_shovel, stop_shovel
from console.letters.policy import DeliveryPolicy
from console.letters.tables import LetterTable

# Every connection this adapter opens reads its frames with less work (frames.py).
use_lean_frames()

T = TypeVar("T")
_adapter_numbers = itertools.count(1)

DEFAULTS = {
    "connect_timeout": 5.0,  # seconds to open a connection or get an HTTP answer
    "timeout": 30.0,  # seconds for one AMQP operation
    "confirm_timeout": 60.0,  # seconds to wait for a window of publisher confirms
    "heartbeat": 30,  # AMQP heartbeat, seconds
    "vhosts": None,  # discover only these vhosts (default: every vhost the user can see)
}


class RabbitMQAdapter(Adapter):
    kind = "rabbitmq"
    label = "RabbitMQ"
    # Any get on a RabbitMQ queue requeues: redelivered flag, order, and on quorum queues a
    # delivery that counts against x-delivery-limit. So the console captures instead.
    can_peek_safely = False
    # A whole queue can be moved by the broker itself with a dynamic shovel (``shovel.py``).
    can_move_server_side = True
    can_move_to_destination = True
    uses_management_url = True
    url_example = "amqp://host:5672/%2F"
    management_url_help = "RabbitMQ's management API, e.g. http://host:15672"
    # The calls share a channel per vhost; its publisher sends one call's messages at a time.
    publishes_concurrently = True

    @classmethod
    def letter_tables(cls, envelope_details: dict[str, Any], headers: dict[str, Any]) -> list[LetterTable]:
        return x_death_tables(envelope_details, headers)

    def __init__(self, config: BrokerConfig) -> None:
        super().__init__(config)
        self.options = {**DEFAULTS, **(config.options or {})}
        url = URL(config.url)
        if url.scheme not in ("amqp", "amqps") or not url.host:
            raise BrokerError(f"{self._safe(config.url)} is not an amqp:// or amqps:// URL", permanent=True)
        self.host = url.host
        self.tls = url.scheme == "amqps"
        self.port = url.explicit_port or (5671 if self.tls else 5672)
        self.vhost = unquote(url.raw_path[1:]) if url.raw_path not in ("", "/") else "/"
        self.username = config.username or "guest"  # AMQP's customary default
        self.connection_name = f"dead-letter-office pid {os.getpid()} adapter {next(_adapter_numbers)}"
        self._loop: LoopThread | None = None
        self._starting_loop = threading.Lock()
        self._connections: dict[str, Any] = {}
        self._connecting: dict[str, asyncio.Lock] = {}
        self._management: ManagementAPI | None = None
        self._publishers: dict[str, ConfirmWindowPublisher] = {}
        self._opening_publisher: dict[str, asyncio.Lock] = {}
        self._closed = False

    # -- naming things in messages (never the password) -------------------------------------

    @staticmethod
    def _safe(url: str) -> str:
        try:
            return str(URL(url).with_user(None))
        except (ValueError, TypeError):
            return "the configured URL"

    def where(self, vhost: str | None = None) -> str:
        scheme = "amqps" if self.tls else "amqp"
        return f"RabbitMQ at {scheme}://{self.host}:{self.port}/{(vhost or self.vhost).replace('/', '%2F')}"

    # -- the event loop and AMQP connections ------------------------------------------------

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the adapter's loop; every client error becomes a BrokerError."""
        if self._closed:
            coro.close()
            raise BrokerError("this RabbitMQ adapter is closed", permanent=True)
        with self._starting_loop:  # publishes may come from several threads at once
            if self._loop is None:
                self._loop = LoopThread(f"rabbitmq-{self.host}:{self.port}")
        try:
            return self._loop.run(coro, timeout if timeout is not None else self.options["timeout"])
        except BrokerError:
            raise
        except TimeoutError:
            raise BrokerError(f"{self.where()} did not answer in time", permanent=False) from None
        except amqp_errors.ChannelNotFoundEntity as exc:
            raise BrokerError(f"{self.where()}: {_reason(exc)}", permanent=True) from None
        except (amqp_errors.ChannelAccessRefused, amqp_errors.ChannelPreconditionFailed) as exc:
            raise BrokerError(f"{self.where()} refused: {_reason(exc)}", permanent=True) from None
        except RecursionError:
            raise self._unreadable() from None
        except (amqp_errors.AMQPError, amqp_errors.ChannelInvalidStateError, ConnectionError, OSError,
                asyncio.CancelledError) as exc:
            if isinstance(exc.__cause__, RecursionError):
                raise self._unreadable() from None
            raise BrokerError(f"lost the connection to {self.where()}: {_reason(exc)}", permanent=False) from None

    def _unreadable(self) -> BrokerError:
        """A message whose header tables nest deeper than the AMQP client's decoder can follow
        (it recurses, and Python's stack stops it): reading it closes the connection, every time."""
        return BrokerError(
            f"a message from {self.where()} cannot be read: its headers nest deeper than the AMQP client can "
            "decode. It stays on the broker, unacknowledged, ahead of the messages behind it; move it aside "
            "with RabbitMQ's own tools (a shovel, or the management UI), then try again", permanent=True)

    async def _connection(self, vhost: str) -> Any:
        lock = self._connecting.setdefault(vhost, asyncio.Lock())
        async with lock:
            connection = self._connections.get(vhost)
            if connection is not None and _alive(connection):
                return connection
            connection = await self._connect(vhost)
            self._connections[vhost] = connection
            return connection

    async def _connect(self, vhost: str) -> Any:
        where = self.where(vhost)
        try:
            return await aio_pika.connect(
                host=self.host, port=self.port, ssl=self.tls, virtualhost=vhost,
                login=self.username, password=self.config.password,
                timeout=self.options["connect_timeout"], heartbeat=self.options["heartbeat"],
                client_properties={"connection_name": self.connection_name},
            )
        except (amqp_errors.AuthenticationError, amqp_errors.ProbableAuthenticationError):
            raise BrokerError(f"{where} refused the login of user {self.username!r}: "
                              "wrong username or password", permanent=True) from None
        except (amqp_errors.ConnectionNotAllowed, amqp_errors.InvalidFrameError):
            # RabbitMQ answers an unknown vhost, or one the user may not use, by closing. Its own
            # words are not repeated: a connection test shows this to whoever typed the URL.
            raise BrokerError(f"{where} refused user {self.username!r} access to vhost {vhost!r} "
                              "(no such vhost, or no permission)", permanent=True) from None
        except TimeoutError:
            raise BrokerError(f"cannot reach {where}: no answer within {self.options['connect_timeout']}s",
                              permanent=False) from None
        except (amqp_errors.AMQPError, ConnectionError, OSError) as exc:
            raise BrokerError(f"cannot reach {where}: {_reason(exc)}", permanent=False) from None

    def _api(self) -> ManagementAPI:
        if not self.config.management_url:
            raise BrokerError(f"{self.where()} has no management API URL; discovery needs one", permanent=True)
        if self._management is None:
            self._management = ManagementAPI(self.config.management_url, self.username, self.config.password,
                                             timeout=self.options["connect_timeout"])
        return self._management

    # -- the adapter contract --------------------------------------------------------------------

    def check(self) -> dict[str, Any]:
        """Open the AMQP connection and ask the management API for its overview."""
        connection = self._run(self._connection(self.vhost), self.options["connect_timeout"] + 5)
        server = dict(connection.transport.connection.server_properties or {})
        facts: dict[str, Any] = {"version": _text(server.get("version")), "vhost": self.vhost,
                                 "cluster_name": _text(server.get("cluster_name"))}
        if self.config.management_url:
            overview = self._api().get("/api/overview")
            if not isinstance(overview, dict) or "rabbitmq_version" not in overview:
                raise BrokerError(f"{self.config.management_url} answered, but not as a RabbitMQ management "
                                  "API does (its overview names no RabbitMQ version)", permanent=True)
            facts.update(
                version=overview.get("rabbitmq_version", facts["version"]),
                management_version=overview.get("management_version", ""),
                erlang_version=overview.get("erlang_version", ""),
                cluster_name=overview.get("cluster_name", facts["cluster_name"]),
            )
        return facts

    def discover(self) -> list[PlaceInfo]:
        """Dead places from the management API's topology (see ``discovery``); depth and
        consumers are then read exactly with a passive declare (the API's counts lag)."""
        api = self._api()
        vhosts = self.options.get("vhosts") or [None]
        queues, exchanges, bindings = [], [], []
        for vhost in vhosts:
            queues += api.queues(vhost)
            exchanges += api.exchanges(vhost)
            bindings += api.bindings(vhost)
        places = find_dead_places(Topology.from_api(queues, exchanges, bindings))
        for vhost in sorted({place.scope for place in places}):
            mine = [place for place in places if place.scope == vhost]
            try:
                counts = self._run(self._counts(vhost, [place.name for place in mine]))
            except BrokerError as exc:
                # The topology is what discovery is for; without AMQP access to this vhost
                # the API's sampled counts still say roughly how full each place is.
                for place in mine:
                    place.details["counts"] = f"sampled by the management API ({exc.message})"
                continue
            for place in mine:
                if place.name in counts:
                    place.depth, place.consumers = counts[place.name]
        return places

    def delivery_policy(self, origin: PlaceRef) -> DeliveryPolicy:
        """From the management API: the origin queue's delivery limit, dead-letter route and
        retry chain (see ``policy``)."""
        return self.delivery_policies([origin])[0]

    def delivery_policies(self, origins: Sequence[PlaceRef]) -> list[DeliveryPolicy]:
        """One read of each vhost's topology (and of the broker's version) for all the origins."""
        api = self._api()
        version = str((api.get("/api/overview", columns="rabbitmq_version") or {}).get("rabbitmq_version", ""))
        topologies: dict[str, Topology] = {}
        policies = []
        for origin in origins:
            vhost = origin.scope or self.vhost
            if vhost not in topologies:
                topologies[vhost] = Topology.from_api(api.queues(vhost), api.exchanges(vhost), api.bindings(vhost))
            told = origin_policy(topologies[vhost], (vhost, origin.name), version)
            # Dead places are named in the scope the console asked in (a place on the default
            # vhost may have been named with "" or "/").
            policies.append(replace(told, dead_places=tuple((name, origin.scope) for name, _ in told.dead_places)))
        return policies

    def stats(self, place: PlaceRef) -> PlaceInfo:
        vhost = place.scope or self.vhost
        counts = self._run(self._counts(vhost, [place.name]))
        if place.name not in counts:
            raise BrokerError(f"no queue {place.name!r} on vhost {vhost!r} at {self.where(vhost)}", permanent=True)
        depth, consumers = counts[place.name]
        info = PlaceInfo(name=place.name, scope=place.scope, depth=depth, consumers=consumers)
        if self.config.management_url:
            try:
                queue = self._api().queue(vhost, place.name)
            except BrokerError:
                pass  # the oldest message's age is a nicety; depth and consumers came over AMQP
            else:
                info.oldest_at = timestamp_seconds(queue.get("head_message_timestamp"))
                info.details = {"type": queue.get("type", "classic")}
        return info

    def depths(self, places: Sequence[PlaceRef]) -> dict[PlaceRef, int | None]:
        """Ready messages per queue, by passive declares on one channel per vhost."""
        by_vhost: dict[str, list[PlaceRef]] = {}
        for place in places:
            by_vhost.setdefault(place.scope or self.vhost, []).append(place)
        found: dict[PlaceRef, int | None] = {}
        for vhost, refs in by_vhost.items():
            counts = self._run(self._counts(vhost, [place.name for place in refs]))
            found.update({place: counts[place.name][0] for place in refs if place.name in counts})
        return found

    async def _counts(self, vhost: str, names: list[str]) -> dict[str, tuple[int, int]]:
        """Ready messages and consumers per queue by passive declare (touches no message);
        queues that do not exist are left out."""
        connection = await self._connection(vhost)
        counts: dict[str, tuple[int, int]] = {}
        channel = None
        try:
            for name in names:
                if channel is None or channel.is_closed:
                    channel = await connection.channel(publisher_confirms=False)
                raw = await channel.get_underlay_channel()
                try:
                    ok = await raw.queue_declare(name, passive=True)
                except amqp_errors.ChannelNotFoundEntity:
                    continue  # deleted since the listing; RabbitMQ closed the channel
                counts[name] = (ok.message_count, ok.consumer_count)
        finally:
            if channel is not None and not channel.is_closed:
                await channel.close()
        return counts

    def open_capture(self, place: PlaceRef, *, prefetch: int) -> CaptureSession:
        vhost = place.scope or self.vhost
        if place.name not in self._run(self._counts(vhost, [place.name])):
            raise BrokerError(f"no queue {place.name!r} on vhost {vhost!r} at {self.where(vhost)}", permanent=True)

        async def start() -> QueueConsumer:
            connection = await self._connection(vhost)
            return await QueueConsumer.start(connection, place.name, prefetch, f"{place.name!r} on {self.where(vhost)}")

        consumer = self._run(start())
        return RabbitCapture(lambda coro, wait: self._run(coro, wait + self.options["timeout"]), consumer, place)

    def settled(self, place: PlaceRef) -> bool:
        """Asked once the capture's own consumer is gone: nothing ready, and no consumer left
        that may hold messages unacknowledged. A worker killed mid-capture leaves its consumer
        registered until RabbitMQ sees its connection close, and its messages come back only
        then: forgetting their copies before would store them twice."""
        counts = self._run(self._counts(place.scope or self.vhost, [place.name]))
        return counts.get(place.name) == (0, 0)

    def open_reader(self, *, per_place: int) -> PlaceReader:
        """Consumers on many queues over this adapter's connection, a few channels (``reader.py``)."""
        return RabbitReader(self, per_place=per_place)

    def publish(self, messages: Iterable[Outgoing], *, window: int) -> list[PublishResult]:
        """Publish each message to the default exchange with routing key = its destination,
        ``mandatory`` and publisher confirms, ``window`` confirms outstanding at a time."""
        messages = list(messages)
        by_vhost: dict[str, list[tuple[int, Outgoing]]] = {}
        for index, out in enumerate(messages):
            by_vhost.setdefault(out.scope or self.vhost, []).append((index, out))
        results: list[PublishResult | None] = [None] * len(messages)
        for vhost, items in by_vhost.items():
            windows = max(1, -(-len(items) // max(1, window)))
            timeout = windows * self.options["confirm_timeout"] + self.options["timeout"]
            for index, result in self._run(self._publish(vhost, items, window), timeout).items():
                results[index] = result
        return [result for result in results if result is not None]

    async def _publish(self, vhost: str, items: list[tuple[int, Outgoing]], window: int) -> dict[int, PublishResult]:
        publisher = await self._publisher(vhost)
        try:
            return await publisher.publish(items, window)
        except BaseException:
            # Confirms still outstanding on this channel belong to a publish that has given up.
            self._publishers.pop(vhost, None)
            if not publisher.channel.is_closed:
                try:
                    await publisher.channel.close()
                except Exception:
                    pass
            raise

    async def _publisher(self, vhost: str) -> ConfirmWindowPublisher:
        """The vhost's confirm-mode channel, kept open from one publish to the next (one, when
        two publishes ask at once)."""
        async with self._opening_publisher.setdefault(vhost, asyncio.Lock()):
            publisher = self._publishers.get(vhost)
            if publisher is not None and not publisher.channel.is_closed:
                return publisher
            return await self._open_publisher(vhost)

    async def _open_publisher(self, vhost: str) -> ConfirmWindowPublisher:
        connection = await self._connection(vhost)
        channel = await connection.channel(publisher_confirms=True)
        publisher = ConfirmWindowPublisher(await channel.get_underlay_channel(), vhost=vhost,
                                           username=self.username, timeout=self.options["confirm_timeout"])
        self._publishers[vhost] = publisher
        return publisher

    def start_server_move(self, place: PlaceRef, destination: str, *, name: str, count: int) -> ServerMove:
        """A dynamic shovel from the place to ``destination`` on the same vhost (``shovel.py``)."""
        return start_shovel(self._api(), place.scope or self.vhost, place.name, destination, name=name, count=count)

    def server_move(self, place: PlaceRef, name: str) -> ServerMove | None:
        return find_shovel(self._api(), place.scope or self.vhost, name)

    def stop_server_move(self, place: PlaceRef, name: str) -> None:
        stop_shovel(self._api(), place.scope or self.vhost, name)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._management is not None:
            self._management.close()
        if self._loop is not None:
            self._loop.stop(self._close_connections())

    async def _close_connections(self) -> None:
        for connection in list(self._connections.values()):
            if _alive(connection):
                try:
                    await asyncio.wait_for(connection.close(), 5)
                except Exception:
                    pass
        self._connections.clear()


def _alive(connection: Any) -> bool:
    """aio-pika's own flag lags when the broker closes the connection; aiormq's does not."""
    transport = getattr(connection, "transport", None)
    return not connection.is_closed and transport is not None and not transport.connection.is_closed


def _reason(exc: BaseException) -> str:
    text = str(exc.args[0]) if len(getattr(exc, "args", ())) == 1 else str(exc)
    return text or type(exc).__name__


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return "" if value is None else str(value)
