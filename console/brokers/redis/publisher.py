"""Publishing letters: XADD to the destination stream, and drop the source entry, in one script.

The script XADDs the copy and then, in the same atomic step, acknowledges the original
pending entry in its group (a letter captured from a group) or deletes it from its dead
stream. Normally the capture did that already and this is a no-op; it matters when a
capture committed its copy but died before its ack: the replay then cannot leave the
original behind to be retried or captured again.

XADD uses NOMKSTREAM, so a destination that is not a stream yet is refused instead of
created (unless the ``create_streams`` option says otherwise). An XADD error (WRONGTYPE)
stops the script before anything is written; the clean-up step uses pcall because an
original that is already gone is fine.

Cluster caveat: a script's keys must live in one hash slot. A replay to the origin stream
of a pending entry touches one key; a replay from a dead stream, or a move, touches two,
which on Redis Cluster needs hash tags (``{orders}`` and ``{orders}:dlq``). The adapter
talks to one standalone server or a primary.

Note that XADD reaches every consumer group on the stream, not only the one the letter
died in; the ``x-dlo-replay-id`` field lets the other groups' consumers drop the copy.
"""

from __future__ import annotations

from collections.abc import Iterable

import redis  # the redis-py client library
from redis import exceptions as rx

from console.brokers.base import Outgoing, PublishResult
from console.brokers.redis.connection import Options, translated_errors
from console.brokers.redis.entries import DEAD_STREAM, PENDING, outgoing_fields

# KEYS: destination stream, source stream. ARGV: clean-up (ack|del|none), group, source id,
# may create the stream (1|0), then field, value, ...
_PUBLISH = """
local id
if ARGV[4] == '1' then
  id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 5))
else
  id = redis.call('XADD', KEYS[1], 'NOMKSTREAM', '*', unpack(ARGV, 5))
end
if not id then return false end
if ARGV[1] == 'ack' then
  redis.pcall('XACK', KEYS[2], ARGV[2], ARGV[3])
elseif ARGV[1] == 'del' then
  redis.pcall('XDEL', KEYS[2], ARGV[3])
end
return id
"""


def _script_args(out: Outgoing, options: Options) -> tuple[list[str], list[bytes | str]]:
    props = out.properties
    source = str(props.get("stream") or out.destination)
    cleanup = {PENDING: "ack", DEAD_STREAM: "del"}.get(props.get("source", ""), "none")
    args: list[bytes | str] = [
        cleanup, str(props.get("group", "")), str(props.get("entry_id", "")),
        "1" if options.create_streams else "0",
    ]
    return [out.destination, source], args + outgoing_fields(out)


def publish(client: redis.Redis, where: str, messages: Iterable[Outgoing], options: Options,
            window: int) -> list[PublishResult]:
    """A result per message, in order; ``ok`` once Redis has run the script and returned the new id."""
    script = client.register_script(_PUBLISH)
    messages = list(messages)
    results: list[PublishResult] = []
    for start in range(0, len(messages), max(1, window)):
        chunk = messages[start:start + max(1, window)]
        with translated_errors(where):
            pipe = client.pipeline(transaction=False)
            for out in chunk:
                keys, args = _script_args(out, options)
                script(keys=keys, args=args, client=pipe)
            replies = pipe.execute(raise_on_error=False)
        for out, reply in zip(chunk, replies, strict=True):
            results.append(_result(out, reply))
    return results


def _result(out: Outgoing, reply: object) -> PublishResult:
    if isinstance(reply, rx.ResponseError):
        message = str(reply)
        if "WRONGTYPE" in message:
            message = f"{out.destination!r} is not a stream"
        return PublishResult(out.key, False, message)
    if isinstance(reply, Exception):
        return PublishResult(out.key, False, str(reply))
    if not reply:
        return PublishResult(out.key, False, f"no stream named {out.destination!r} (the console creates no streams)")
    return PublishResult(out.key, True)
