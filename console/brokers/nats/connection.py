"""Connecting to NATS, and turning nats-py's exceptions into BrokerError.

Connections never retry for long: nats-py's default is to reconnect forever, which would hang a
console page or a job on a broker that is down. The console retries jobs itself
(``console.jobs.control.with_broker_retry``), so here one failed attempt is a clear error.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client

from console.brokers.base import BrokerConfig, BrokerError

CONNECT_TIMEOUT = 3.0


def where(config: BrokerConfig) -> str:
    parts = urlsplit(config.url)
    return f"NATS at {parts.hostname or '?'}:{parts.port or 4222}"


async def connect(config: BrokerConfig) -> Client:
    """One connection with one retry (nats-py loops forever without a positive attempt limit).

    Credentials: ``username`` + ``password``, or a ``password`` alone, which is sent as a token
    (it stays encrypted at rest like any password).
    """
    errors: list[BaseException] = []

    async def remember(exc: BaseException) -> None:
        errors.append(exc)

    credentials: dict[str, str] = {}
    if config.username:
        credentials = {"user": config.username, "password": config.password}
    elif config.password:
        credentials = {"token": config.password}
    try:
        return await nats.connect(
            servers=[config.url], name="dead-letter-office", connect_timeout=CONNECT_TIMEOUT,
            allow_reconnect=False, max_reconnect_attempts=1, reconnect_time_wait=0.1,
            error_cb=remember, **credentials,
        )
    except nats.errors.NoServersError:
        # The real cause went to the error callback; NoServersError itself says nothing.
        raise (errors[-1] if errors else ConnectionRefusedError("no server answered")) from None


def translate(exc: BaseException, config: BrokerConfig) -> BrokerError:
    """A BrokerError that says what went wrong, with ``permanent`` set as retrying warrants."""
    place = where(config)
    text = str(exc) or type(exc).__name__
    if isinstance(exc, BrokerError):
        return exc
    if "authorization violation" in text.lower() or isinstance(exc, nats.errors.AuthorizationError):
        return BrokerError(f"{place} refused the credentials (authorization violation)", permanent=True)
    if isinstance(exc, nats.js.errors.ServiceUnavailableError):
        return BrokerError(f"{place} answers but JetStream is not enabled (start it with -js)", permanent=True)
    if isinstance(exc, nats.js.errors.APIError):
        return BrokerError(f"{place}: JetStream refused: {exc.description or text}",
                           permanent=not isinstance(exc, nats.js.errors.ServerError))
    if isinstance(exc, (TimeoutError, nats.errors.TimeoutError)):
        return BrokerError(f"{place} did not answer in time", permanent=False)
    if isinstance(exc, ConnectionRefusedError):
        return BrokerError(f"{place} is unreachable: connection refused", permanent=False)
    if isinstance(exc, (OSError, nats.errors.Error)):
        return BrokerError(f"{place} is unreachable or dropped the connection: {text}", permanent=False)
    raise exc
