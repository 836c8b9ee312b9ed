"""ActiveMQ Classic adapter, over STOMP alone (tested on Debian's 5.17.2).

Debian's build has no web console, no Jolokia and no JMX, so everything here is STOMP 1.2 on
the broker's STOMP connector, through stomp.py (see ``connection`` for how its threads are
kept behind calls with timeouts).

Connection string: ``stomp://host:61613``; the username and password come from the broker's
credentials (ActiveMQ asks for none unless an authentication plugin is configured).

Options (``BrokerConfig.options``, see ``connection.Options``): ``dead_places`` ([]): names
always listed as dead places; ``prefixes`` (["DLQ."]): queue prefixes of individual dead
letter strategies besides ``ActiveMQ.DLQ.Queue.``; ``known_queues`` ([]): application queues
whose individual DLQs (``ActiveMQ.DLQ.Queue.<q>``, ``<prefix><q>``) discovery looks for;
``browse_timeout`` (10 s); ``count_limit`` (10,000): where counting a place by browsing stops.

Features:

* discover: STOMP cannot list queues, so the candidates are ``ActiveMQ.DLQ`` (the shared
  strategy's queue, always listed), the configured names, and the conventional names for the
  known queues. Each is counted by browsing it. Caveat: browsing a queue that does not exist
  makes ActiveMQ create it (empty); only names there is reason to expect are probed, and an
  empty conventional candidate is not listed. Depth is counted by browse, up to
  ``count_limit``: see ``places``. Origins are the
  ``original-destination`` headers seen while browsing; ``oldest_at`` the oldest JMS timestamp.
* peek: ``browser:true``, which consumes nothing and changes no redelivery flag or order:
  ``can_peek_safely``.
* capture: a ``client-individual`` subscription; acks go in one STOMP transaction per batch.
  The envelope: origin from ``original-destination``; reason ``expired``,
  ``max_redeliveries`` or ``poison_ack`` (a STOMP NACK, no cause) from
  ``dlqDeliveryFailureCause``; see ``messages``.
* keeping (``open_reader``): one STOMP connection per reader, a ``client-individual``
  subscription per kept place with ``activemq.prefetchSize`` = the keeper's share, letters
  pushed as they die (see ``reader``). ``depths`` counts many places in one call by browsing
  them side by side on one connection (see ``depths``).
* replay and move: SENDs in one STOMP transaction per window, confirmed by the COMMIT's
  receipt; a TextMessage stays text (no ``content-length``) and persistence is kept. ActiveMQ
  creates any queue a SEND names, so a missing destination cannot be refused. Queues are named
  bare (``orders``); ``/topic/x`` names a topic. No server-side move, no purge verb (a purge of
  letters in custody needs no broker).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from console.brokers.activemq import depths, places, publisher
from console.brokers.activemq.capture import StompCapture
from console.brokers.activemq.connection import Options, StompLink, server_address
from console.brokers.activemq.messages import received
from console.brokers.activemq.multiplex import MultiLink
from console.brokers.activemq.reader import ActiveMQReader
from console.brokers.base import (
    Adapter,
    BrokerConfig,
    CaptureSession,
    Outgoing,
    PlaceInfo,
    PlaceReader,
    PlaceRef,
    PublishResult,
    Received,
)
from console.letters.policy import DeliveryPolicy


class ActiveMQAdapter(Adapter):
    kind = "activemq"
    label = "ActiveMQ Classic (STOMP)"
    url_example = "stomp://host:61613"
    can_peek_safely = True
    can_move_server_side = False
    can_move_to_destination = True

    def __init__(self, config: BrokerConfig) -> None:
        super().__init__(config)
        self.options = Options.from_config(config.options)
        server_address(config.url)  # a bad URL is refused now, not on first use
        self._link: MultiLink | None = None

    def _connected(self) -> MultiLink:
        """The adapter's link, opened again if ActiveMQ closed it (it does after an ERROR)."""
        if self._link is None or not self._link.alive:
            if self._link is not None:
                self._link.close()
            self._link = MultiLink(self.config)
        return self._link

    def delivery_policy(self, origin: PlaceRef) -> DeliveryPolicy:
        """Over STOMP the broker tells nothing of redelivery: each client's RedeliveryPolicy
        (or the broker's redeliveryPlugin in activemq.xml) decides, which no STOMP frame shows.

        Where dead letters go is fixed by the broker's naming: the individual strategy puts
        the queue ``q``'s into ``ActiveMQ.DLQ.Queue.q`` (or ``<prefix>q`` for the configured
        prefixes), so those are ``q``'s dead places. The shared ``ActiveMQ.DLQ`` takes every
        queue's, so only a letter's ``original-destination`` header (content) would say which:
        it makes no queue anyone's to publish into (console.access.topology)."""
        name = origin.name.removeprefix("/queue/")
        dead = () if name.startswith(("/", places.INDIVIDUAL_PREFIX)) or name == places.SHARED_DLQ \
            else tuple((prefix + name, "") for prefix in (places.INDIVIDUAL_PREFIX, *self.options.prefixes))
        return DeliveryPolicy(told=False, dead_places=dead, notes=(
            "each client's RedeliveryPolicy decides (ActiveMQ's default: 6 redeliveries, then its DLQ)",))

    def check(self) -> dict[str, Any]:
        link = self._connected()
        product, _, version = link.server.partition("/")
        return {"version": version or link.server, "server": link.server or "ActiveMQ (unnamed)",
                "product": product}

    def discover(self) -> list[PlaceInfo]:
        return places.discover(self._connected(), self.options)

    def stats(self, place: PlaceRef) -> PlaceInfo:
        found = places.survey(self._connected(), place.name, self.options)
        by = "configured" if place.name in self.options.dead_places else "convention"
        return places.place_info(place.name, by, found)

    def depths(self, places: Sequence[PlaceRef]) -> dict[PlaceRef, int | None]:
        """All the places counted in one call on the adapter's one connection
        (``depths.count``): their browses run side by side, 128 at a time, so the cost is about
        one SUBSCRIBE/UNSUBSCRIBE round trip and one of ActiveMQ's browse turns per 128
        places (far less than ``stats`` one place at a time; figures: benchmarks/HISTORY.md),
        plus every message of every place sent by the broker once (up to ``count_limit``
        each, then a lower bound). Over STOMP a depth can only be counted by browsing:
        Debian's ActiveMQ has no Jolokia, JMX or statistics plugin to ask. A place that is no
        queue comes back 0 (browsing creates it, empty)."""
        counted = depths.count(self._connected(), [place.name for place in places],
                               limit=self.options.count_limit, idle_timeout=self.options.browse_timeout)
        return {place: counted[place.name] for place in places}

    def open_reader(self, *, per_place: int) -> PlaceReader:
        """One STOMP connection of its own, a subscription per followed place
        (``reader.ActiveMQReader``): letters are pushed as they die; nothing is polled."""
        link = MultiLink(self.config)
        return ActiveMQReader(self, link, self.options, per_place=per_place)

    def peek(self, place: PlaceRef, limit: int) -> list[Received]:
        """The first ``limit`` letters, browsed: nothing is consumed or flagged redelivered."""
        return [received(frame, place.name)
                for frame in places.browse(self._connected(), place.name, self.options, limit=limit)]

    def open_capture(self, place: PlaceRef, *, prefetch: int) -> CaptureSession:
        # A link of its own: closing the session must hand its messages back without closing
        # the adapter's link (stats runs on it after the capture).
        link = StompLink(self.config)
        try:
            return StompCapture(link, place.name, prefetch)
        except BaseException:
            link.close()
            raise

    def publish(self, messages: Iterable[Outgoing], *, window: int) -> list[PublishResult]:
        return publisher.publish(self._connected, list(messages), window)

    def close(self) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None
