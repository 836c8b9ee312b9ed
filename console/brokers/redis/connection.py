"""Connecting to Redis, the adapter's options, and redis-py's errors as BrokerError."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import redis  # the redis-py client library (absolute import), not console.brokers.redis
from redis import exceptions as rx
from redis.backoff import NoBackoff
from redis.retry import Retry

from console.brokers.base import BrokerConfig, BrokerError

#: An unreachable server is reported within seconds; the job runner does the waiting.
CONNECT_TIMEOUT_SECONDS = 3.0
DEAD_STREAM_PATTERNS = ("*:dlq", "*.dlq", "*-dlq", "dlq:*", "*:dead", "dead:*")
BODY_FIELDS = ("body", "payload", "data")


@dataclass(frozen=True)
class Options:
    """``BrokerConfig.options`` for Redis, with their defaults."""

    #: A pending entry delivered more times than this is a letter.
    threshold: int = 3
    #: An entry must have been idle this long before the console takes it from its group.
    min_idle_ms: int = 60_000
    #: Stream names (fnmatch globs, case-insensitive) that are dead streams, besides the defaults.
    dead_stream_patterns: tuple[str, ...] = ()
    #: The first of these fields present in an entry is the letter's body.
    body_fields: tuple[str, ...] = BODY_FIELDS
    #: The consumer name the console claims pending entries under while it captures them.
    consumer: str = "dlo-console"
    #: A move may XADD to a stream that does not exist yet (off: a typo makes no stream).
    create_streams: bool = False
    #: How many pending entries one XPENDING call reads.
    page_size: int = 500
    socket_timeout: float = 30.0

    @classmethod
    def from_config(cls, options: dict[str, Any]) -> Options:
        try:
            return cls(
                threshold=int(options.get("threshold", cls.threshold)),
                min_idle_ms=int(options.get("min_idle_ms", cls.min_idle_ms)),
                dead_stream_patterns=tuple(str(p) for p in options.get("dead_stream_patterns", ())),
                body_fields=tuple(str(f) for f in options.get("body_fields", BODY_FIELDS)),
                consumer=str(options.get("consumer", cls.consumer)),
                create_streams=bool(options.get("create_streams", False)),
                page_size=max(1, int(options.get("page_size", cls.page_size))),
                socket_timeout=float(options.get("socket_timeout", cls.socket_timeout)),
            )
        except (TypeError, ValueError) as exc:
            raise BrokerError(f"bad Redis option: {exc}", permanent=True) from None

    @property
    def all_dead_stream_patterns(self) -> tuple[str, ...]:
        return DEAD_STREAM_PATTERNS + self.dead_stream_patterns


def server_label(url: str) -> str:
    """``redis://host:6379/0`` -> ``host:6379/0``, for messages (the URL holds no secrets)."""
    parts = urlsplit(url)
    return f"{parts.hostname or '?'}:{parts.port or 6379}{parts.path or ''}"


def connect(config: BrokerConfig, options: Options) -> redis.Redis:
    """A client that fails fast: one reconnect for a stale pooled socket, no backoff."""
    credentials = {}
    if config.username:
        credentials["username"] = config.username
    if config.password:
        credentials["password"] = config.password
    try:
        return redis.Redis.from_url(
            config.url,
            socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
            socket_timeout=options.socket_timeout,
            retry=Retry(NoBackoff(), 1),
            decode_responses=False,
            **credentials,
        )
    except ValueError as exc:
        raise BrokerError(f"{server_label(config.url)} is not a Redis URL: {exc}", permanent=True) from None


@contextmanager
def translated_errors(where: str) -> Iterator[None]:
    """Turn redis-py exceptions into BrokerError; messages never carry the password."""
    try:
        yield
    except rx.AuthenticationError:
        raise BrokerError(f"Redis at {where} refused the login: wrong username or password",
                          permanent=True) from None
    except rx.InvalidResponse:
        # Something else answers there; its bytes would be quoted in the message.
        raise BrokerError(f"{where} did not answer as a Redis server does", permanent=True) from None
    except rx.NoPermissionError as exc:
        raise BrokerError(f"the Redis user may not do this at {where}: {exc}", permanent=True) from None
    except (rx.ConnectionError, rx.TimeoutError) as exc:
        raise BrokerError(f"cannot reach Redis at {where}: {exc}") from None
    except rx.ResponseError as exc:
        # NOGROUP, WRONGTYPE, no such key: asking again will not help.
        raise BrokerError(f"Redis at {where} refused: {exc}", permanent=True) from None
    except rx.RedisError as exc:
        raise BrokerError(f"Redis at {where}: {exc}") from None
