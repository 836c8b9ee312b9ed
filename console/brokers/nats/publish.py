"""Replay and move on JetStream: publish with a Nats-Msg-Id, await the PubAck, delete the original.

The replay id becomes the ``Nats-Msg-Id``, so the stream drops a duplicate published again
within its dedup window (2 minutes by default) after a crash. Once the new copy is stored, the
original is deleted from its stream by sequence (it stayed there after its consumer gave up);
an original that is gone already is fine. The letter's own ``Nats-Msg-Id`` stays in custody
(its message id) and is not sent again.

A message bigger than the server's ``max_payload`` (headers included) is refused here: sent,
it would make the server close the whole connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import nats.errors
from nats.js import JetStreamContext
from nats.js.errors import APIError, NoStreamResponseError, NotFoundError

from console.brokers.base import Outgoing, PublishResult
from console.brokers.nats.letters import (
    CONSUMER_PROP,
    GONE_PROP,
    MSG_ID_HEADER,
    SEQ_PROP,
    STREAM_PROP,
    SUBJECT_PROP,
)

REPLAY_ID_HEADER = "x-dlo-replay-id"  # console.services.custody.REPLAY_ID_HEADER (no Django here)
PUBLISH_TIMEOUT = 10.0
_STATUS_LINE = len(b"NATS/1.0\r\n") + len(b"\r\n")


def subject_of(out: Outgoing) -> str:
    """Where to publish: a replay names the origin consumer, which stands for the subject the
    message was published on; anything else (a move) names a subject."""
    consumer = out.properties.get(CONSUMER_PROP)
    if consumer and out.destination == consumer and out.properties.get(SUBJECT_PROP):
        return str(out.properties[SUBJECT_PROP])
    return out.destination


def wire_headers(out: Outgoing) -> dict[str, str]:
    """The headers to send: nats-py sends text only, one value per key.

    The letter's own ``Nats-Msg-Id`` is replaced by the replay id (or dropped without one):
    within the dedup window the stream would take the old id for a duplicate and silently
    store nothing, and the original would then be deleted.
    """
    headers: dict[str, str] = {}
    for key, value in out.headers.items():
        lowered = key.lower()
        if lowered == MSG_ID_HEADER.lower():
            continue
        if lowered.startswith("nats-expected-"):
            continue  # the first publish's expectations about the stream would fail now
        headers[key] = _text(value)
    if headers.get(REPLAY_ID_HEADER):
        headers[MSG_ID_HEADER] = headers[REPLAY_ID_HEADER]
    return headers


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    return str(value)


def wire_size(body: bytes, headers: dict[str, str]) -> int:
    """Bytes the server counts against max_payload: the headers block and the body."""
    block = sum(len(k.strip().encode()) + len(v.strip().encode()) + 4 for k, v in headers.items())
    return len(body) + (block + _STATUS_LINE if headers else 0)


async def publish_all(js: JetStreamContext, messages: Sequence[Outgoing], *, window: int, max_payload: int
                      ) -> list[PublishResult]:
    """Publish in windows of ``window`` concurrent PubAcks; a result per message, in order."""
    results: list[PublishResult] = []
    size = max(1, window)
    for start in range(0, len(messages), size):
        chunk = messages[start:start + size]
        results.extend(await asyncio.gather(*(_publish_one(js, out, max_payload) for out in chunk)))
    return results


async def _publish_one(js: JetStreamContext, out: Outgoing, max_payload: int) -> PublishResult:
    if out.properties.get(GONE_PROP):
        return PublishResult(out.key, False, "the message aged out of its stream before it was captured: "
                                             "there is no body to publish")
    subject = subject_of(out)
    headers = wire_headers(out)
    size = wire_size(out.body, headers)
    if size > max_payload:
        # Sending it would make the server drop the whole connection (maximum payload violation).
        return PublishResult(out.key, False, f"{size} bytes with headers exceed the server's max_payload "
                                             f"of {max_payload} bytes")
    try:
        await js.publish(subject, out.body, timeout=PUBLISH_TIMEOUT, headers=headers or None)
    except NoStreamResponseError:
        return PublishResult(out.key, False, f"no stream for subject {subject!r}")
    except nats.errors.BadSubjectError:
        return PublishResult(out.key, False, f"{subject!r} is not a valid subject")
    except nats.errors.BadHeaderError as exc:
        return PublishResult(out.key, False, f"header name not allowed by NATS: {exc}")
    except APIError as exc:
        return PublishResult(out.key, False, f"JetStream refused the message: {exc.description or exc}")
    except nats.errors.TimeoutError:
        return PublishResult(out.key, False, f"no PubAck from JetStream within {PUBLISH_TIMEOUT:.0f}s")
    return PublishResult(out.key, True, await _delete_original(js, out))


async def _delete_original(js: JetStreamContext, out: Outgoing) -> str:
    """Delete the dead original; returns a note when that failed (the publish still stands)."""
    stream, seq = out.properties.get(STREAM_PROP), out.properties.get(SEQ_PROP)
    if not stream or not seq:
        return ""
    try:
        await js.delete_msg(str(stream), int(seq))
    except NotFoundError:
        pass  # deleted already (an earlier try of this replay), aged out, or the stream is gone
    except APIError as exc:
        return f"published, but the original {stream}#{seq} could not be deleted: {exc.description or exc}"
    return ""
