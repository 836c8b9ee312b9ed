"""The console's own record of deaths: a stream keeping the server's delivery advisories.

JetStream has no dead-letter queue. When a message reaches its consumer's ``max_deliver`` the
server publishes one MAX_DELIVERIES advisory, and an ``AckTerm`` publishes one MSG_TERMINATED
advisory; both are plain core-NATS messages, lost if nobody listens at that moment. So the
console binds a stream of its own (``DLO_ADVISORIES``) to those subjects: the server stores
each advisory even while no console process runs (verified on nats-server 2.9.10).

Per dead place (one source consumer) the console keeps durable pull consumers on that stream,
one per advisory kind, filtered to the place's advisories: what they have not acknowledged is
what is not yet captured. Once a letter is stored and its advisory acknowledged, the advisory
is deleted from a stream the console made (``forget``), so the stream holds what waits for
capture. It keeps that for a month (and at most 1 GiB, oldest dropped first): a console down
for longer loses the oldest deaths' announcements, not the messages themselves, which stay in
their streams.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    ConsumerInfo,
    DeliverPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import BadRequestError, NotFoundError

from console.brokers.base import BrokerError

log = logging.getLogger(__name__)

STREAM = "DLO_ADVISORIES"
PREFIX = "$JS.EVENT.ADVISORY.CONSUMER"
SUBJECTS = [f"{PREFIX}.MAX_DELIVERIES.>", f"{PREFIX}.MSG_TERMINATED.>"]
REASONS = {"MAX_DELIVERIES": "max_deliver", "MSG_TERMINATED": "terminated"}
KEEP_SECONDS = 30 * 24 * 3600  # a month: longer than any console outage we plan for
KEEP_BYTES = 1024**3  # advisories are ~300 bytes: millions of deaths
#: How the console marks an advisory stream it made itself: only from such a stream are captured
#: advisories deleted (``forget``); a stream the operator made and named is left as it is.
OWN_DESCRIPTION = "Dead Letter Office: consumer delivery advisories, kept while the console is down"
TRACKER_ACK_WAIT = 30.0  # fetch -> commit to PostgreSQL -> ack; also how long a crashed
# capture's advisories stay out of sight before they come back


async def ensure_stream(js: JetStreamContext, name: str) -> None:
    """Create the advisory stream unless it exists (an existing one is left as the operator set it)."""
    try:
        await js.stream_info(name)
        return
    except NotFoundError:
        pass
    config = StreamConfig(
        name=name, subjects=SUBJECTS, storage=StorageType.FILE, retention=RetentionPolicy.LIMITS,
        max_age=KEEP_SECONDS, max_bytes=KEEP_BYTES,
        description=OWN_DESCRIPTION,
    )
    try:
        await js.add_stream(config)
    except BadRequestError as exc:
        if exc.err_code == 10065:  # subjects overlap with an existing stream
            raise BrokerError(
                f"another stream already stores the consumer advisories ({exc.description}); "
                f"name it in the broker's options as advisory_stream", permanent=True,
            ) from None
        if exc.err_code != 10058:  # 10058: created meanwhile by another console process
            raise


async def is_own(js: JetStreamContext, name: str) -> bool:
    """Whether the console made this advisory stream (and may delete from it)."""
    try:
        info = await js.stream_info(name)
    except NotFoundError:
        return False
    return info.config.description == OWN_DESCRIPTION


async def forget(js: JetStreamContext, name: str, seqs: list[int]) -> None:
    """Delete captured advisories from the console's own advisory stream, by sequence.

    Acknowledging is not enough on nats-server 2.9.10: restarted with SIGTERM, it put a
    filtered tracker's delivery pointer back (delivered up to sequence 806 before, 420 after,
    seen in the NATS crash test) and handed out again advisories acknowledged long before, as
    first deliveries, which nothing can tell from new deaths. A deleted advisory cannot come
    back. A failed delete raises BrokerError, so the letters' copies stay pending: the
    advisory, left in the stream, comes back when its place's trackers are made again
    (``drop_trackers``) and meets its copy."""
    async def one(seq: int) -> Exception | None:
        try:
            await js.delete_msg(name, seq)
        except NotFoundError:
            pass  # deleted already, or aged out
        except Exception as exc:  # noqa: BLE001 - said below, for all of them
            return exc
        return None

    failed = [exc for exc in await asyncio.gather(*(one(seq) for seq in seqs)) if exc is not None]
    if failed:
        raise BrokerError(f"could not delete {len(failed)} captured advisories from {name}: {failed[0]}")


async def drop_trackers(js: JetStreamContext, name: str, stream: str, consumer: str) -> None:
    """Delete a place's trackers: made again on next use (``ensure_trackers``), they hand out
    every advisory of the place still in the stream, from its start."""
    for kind in REASONS:
        try:
            await js.delete_consumer(name, tracker_name(stream, consumer, kind))
        except NotFoundError:
            pass


async def kept(js: JetStreamContext, name: str, stream: str, consumer: str) -> int:
    """How many advisories of one consumer the console's own advisory stream still holds. A
    captured advisory is deleted once acknowledged (``forget``), so any left were not captured
    (or their delete failed): unlike a tracker's counts, this survives nats-server 2.9.10's
    restart, which put the trackers' pointers back and lost what they held."""
    info = await js.stream_info(name, subjects_filter=f"{PREFIX}.*.{stream}.{consumer}")
    return sum((info.state.subjects or {}).values())


def seq_of(note: Any) -> int:
    """A delivered advisory's sequence in the advisory stream: the same on every delivery of it."""
    return int(note.metadata.sequence.stream)


class RecentAcks:
    """Advisories acknowledged a moment ago, by ``seq_of``: a copy of one that lands now is
    dropped, as a copy of one still in hand is. The server sends an advisory again when its ack
    wait runs out while its letter is being stored, and that copy may land after the ack, when
    the letter's custody copy is no longer pending: it would be stored twice (seen with a 1 s
    ack wait on a busy machine: 36 letters of 400). The one ack covers both deliveries.
    Remembered for two ack waits, long enough for any copy sent before the ack to land."""

    def __init__(self, ack_wait: float) -> None:
        self.keep_for = 2 * (ack_wait or TRACKER_ACK_WAIT)
        self._acked: OrderedDict[int, float] = OrderedDict()

    def add(self, notes: Iterable[Any]) -> None:
        now = time.monotonic()
        while self._acked and next(iter(self._acked.values())) < now - self.keep_for:
            self._acked.popitem(last=False)
        for note in notes:
            self._acked[seq_of(note)] = now

    def __contains__(self, note: Any) -> bool:
        return seq_of(note) in self._acked


def place_filter(stream: str, consumer: str, kind: str) -> str:
    """One advisory kind of one consumer (stream and consumer names cannot hold '.', '*', '>')."""
    return f"{PREFIX}.{kind}.{stream}.{consumer}"


def tracker_name(stream: str, consumer: str, kind: str) -> str:
    digest = hashlib.sha256(f"{stream}\x00{consumer}\x00{kind}".encode()).hexdigest()[:20]
    return f"dlo_{digest}"


async def ensure_trackers(js: JetStreamContext, advisory_stream: str, stream: str, consumer: str,
                          ack_wait: float = TRACKER_ACK_WAIT) -> list[ConsumerInfo]:
    """The place's durable consumers on the advisory stream, one per advisory kind, made on
    first use. One per kind because nats-server 2.9 accepts a consumer filter only when it lies
    inside one of the stream's subjects, and takes one filter per consumer."""
    if not stream or not consumer:
        raise BrokerError("a NATS dead place is a consumer: name the consumer, with its stream as the scope",
                          permanent=True)
    trackers = []
    for kind in REASONS:
        name = tracker_name(stream, consumer, kind)
        try:
            trackers.append(await js.consumer_info(advisory_stream, name))
            continue
        except NotFoundError:
            pass
        trackers.append(await js.add_consumer(advisory_stream, ConsumerConfig(
            durable_name=name, description=f"Dead Letter Office: {kind} of {stream}/{consumer}",
            filter_subject=place_filter(stream, consumer, kind), deliver_policy=DeliverPolicy.ALL,
            ack_policy=AckPolicy.EXPLICIT, ack_wait=ack_wait, max_deliver=-1,
            # A consumer whose place nobody captured for longer than advisories are kept goes
            # away; made again, it can only find deaths younger than that, none captured.
            inactive_threshold=2 * KEEP_SECONDS,
        )))
    return trackers


def not_captured(trackers: list[ConsumerInfo]) -> int:
    """Advisories the console has not acknowledged: never delivered, or delivered and unacked."""
    return sum((t.num_pending or 0) + (t.num_ack_pending or 0) for t in trackers)


@dataclass(frozen=True)
class Advisory:
    """One death as the server announced it."""

    reason: str  # max_deliver or terminated
    stream: str
    consumer: str
    stream_seq: int
    deliveries: int
    at: datetime | None
    id: str
    cause: str = ""  # the AckTerm reason, on servers that send one (2.11+)


def parse(subject: str, data: bytes) -> Advisory:
    """Read an advisory; a body that is not one raises ValueError."""
    kind = subject[len(PREFIX) + 1:].split(".", 1)[0]
    event = json.loads(data)
    return Advisory(
        reason=REASONS.get(kind, kind.lower()),
        stream=str(event["stream"]),
        consumer=str(event["consumer"]),
        stream_seq=int(event["stream_seq"]),
        deliveries=int(event.get("deliveries") or 0),
        at=parse_time(event.get("timestamp")),
        id=str(event.get("id", "")),
        cause=str(event.get("reason", "") or ""),
    )


_FRACTION = re.compile(r"\.(\d+)")


def parse_time(value: object) -> datetime | None:
    """RFC 3339 with nanoseconds (Go's format) -> an aware datetime (microseconds kept)."""
    if not isinstance(value, str) or not value:
        return None
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), value, count=1)
    text = text.replace("Z", "+00:00").replace("z", "+00:00")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
