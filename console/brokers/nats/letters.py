"""From an advisory to a letter: fetch the dead message by stream sequence, build its envelope.

The message is read with the stream's MSG.GET API, which touches no consumer: delivery counts,
acknowledgements and order stay as they were. It is not deleted here (other consumers of the
stream may still need it); a replay deletes it once the new copy is stored.
"""

from __future__ import annotations

import base64
from typing import Any

from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg
from nats.js.errors import NotFoundError

from console.brokers.base import Received
from console.brokers.nats.advisories import Advisory
from console.letters.envelope import FailureEnvelope

MSG_ID_HEADER = "Nats-Msg-Id"
# Where a letter came from, kept in its stored properties so a replay can delete the original.
STREAM_PROP, SEQ_PROP, SUBJECT_PROP, CONSUMER_PROP, GONE_PROP = (
    "nats_stream", "nats_seq", "nats_subject", "nats_consumer", "nats_gone",
)


async def fetch_dead(js: JetStreamContext, advisory: Advisory) -> RawStreamMsg | None:
    """The message the advisory speaks of, or None when it is no longer in its stream."""
    try:
        message = await js.get_msg(advisory.stream, advisory.stream_seq)
    except NotFoundError:  # deleted, aged out (max_age, max_msgs, ...), or the stream is gone
        return None
    if advisory.at and message.time and message.time > advisory.at:
        return None  # the stream was recreated and the sequence reused: not our message
    return message


def letter(advisory: Advisory, message: RawStreamMsg | None, *, token: Any, redelivered: bool) -> Received:
    """The Received for one death; a message that aged out becomes a letter marked gone."""
    details = {"stream": advisory.stream, "stream_seq": advisory.stream_seq, "consumer": advisory.consumer,
               "advisory_id": advisory.id}
    properties: dict[str, Any] = {
        STREAM_PROP: advisory.stream, SEQ_PROP: advisory.stream_seq, CONSUMER_PROP: advisory.consumer,
    }
    envelope = FailureEnvelope(
        origin_queue=advisory.consumer, reason=advisory.reason, death_count=advisory.deliveries,
        last_failed_at=advisory.at, exception_message=advisory.cause, details=details,
    )
    if message is None:
        # Said plainly instead of failing the capture: the death is recorded, the body is lost.
        envelope.reason = "gone"
        details.update(gone=True, died_by=advisory.reason)
        properties[GONE_PROP] = True
        return Received(token=token, body=b"", headers={}, properties=properties, envelope=envelope,
                        redelivered=redelivered, message_id=f"{advisory.stream}:{advisory.stream_seq}", once=True)
    headers = parse_headers(message.hdrs)
    envelope.origin_address = message.subject or ""
    properties[SUBJECT_PROP] = message.subject or ""
    if message.time:
        properties["nats_time"] = message.time
    msg_id = headers.get(MSG_ID_HEADER)
    return Received(
        token=token, body=message.data or b"", headers=headers, properties=properties, envelope=envelope,
        redelivered=redelivered,
        message_id=msg_id if isinstance(msg_id, str) and msg_id else f"{advisory.stream}:{advisory.stream_seq}",
        once=True,  # a message dies once for its consumer, however many advisories tell of it
    )


def parse_headers(encoded: str | bytes | None) -> dict[str, Any]:
    """NATS headers exactly as stored (nats-py's own parser goes through the e-mail parser).

    A value that is not UTF-8 stays bytes; a key given several times keeps all its values, in
    order, as a list.
    """
    if not encoded:
        return {}
    raw = base64.b64decode(encoded)
    headers: dict[str, Any] = {}
    for line in raw.split(b"\r\n")[1:]:  # the first line is the status line, NATS/1.0
        if not line or b":" not in line:
            continue
        key_raw, _, value_raw = line.partition(b":")
        key = key_raw.decode("utf-8", "replace")
        value: Any = value_raw.strip(b" \t")
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            pass
        if key in headers:
            previous = headers[key]
            headers[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            headers[key] = value
    return headers
