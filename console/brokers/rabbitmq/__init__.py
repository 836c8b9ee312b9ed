"""RabbitMQ 3.x adapter (AMQP 0-9-1 through aio-pika, the management HTTP API through httpx).

Features
--------
- **Discovery** (``discovery.py``): dead places found from ``GET /api/queues``, ``/api/exchanges``
  and ``/api/bindings``: a queue's dead-letter exchange and routing key from its arguments or
  its effective policy (per key, the argument wins), routed through the DLX's bindings (direct,
  fanout, topic with ``*`` and ``#``, headers, exchange-to-exchange), and name conventions
  (``*.dlq``, ``*.DLQ``, ``*-dead-letter``, ``*.dead-letter``, ``*.error``, ``*_error``,
  ``dlq.*``, ``DLQ.*``). Delay queues of "retry through a TTL queue" loops are left out.
  Depth and consumers come from a passive declare (exact; the API's counts lag), the oldest
  message's time from the API's ``head_message_timestamp``. Nothing is consumed.
- **Capture** (``capture.py``): a consumer with ``basic.qos(prefetch)`` and manual acks; the
  caller acks only what it committed, and an ack returns once the queue has answered a passive
  declare sent after it (``basic.ack`` has no answer of its own); closing the channel requeues
  the rest. The prefetch is three of the batches asked for, so it shrinks for large messages
  (started again when the batch size changes twofold: RabbitMQ fixes it when a consumer starts).
- **The keeper's reader** (``reader.py``): hundreds of queues followed at once, a consumer each
  (manual acks, a prefetch of the place's share) on a few channels of the connection per vhost;
  deliveries wait undecoded in a buffer per queue until taken, places taken in turn.
- **Failure envelope** (``xdeath.py``): origin subscription, exchange, routing key, reason
  (``rejected``, ``expired``, ``maxlen``, ``delivery_limit``), count and failure times from
  ``x-death``, skipping retry-queue hops; ``x-first-death-*`` and quorum ``x-delivery-count``
  kept in the details.
- **Publish** (``publisher.py``): to the default exchange with routing key = destination queue,
  ``mandatory`` and publisher confirms, ``window`` confirms outstanding at a time; a returned
  (unroutable) or nacked message is a failed result, a lost connection a temporary BrokerError.
  Body, properties and headers leave as given (no message id is invented).
- **Server-side moves** (``shovel.py``): a whole queue moved by a dynamic shovel through the
  management API (on-confirm, removing itself after the count given; the direct ``amqp:///``
  URI, so no password is stored in the broker). Needs the ``rabbitmq_shovel`` and
  ``rabbitmq_shovel_management`` plugins and a user with the ``policymaker`` (or
  ``administrator``) tag.
- **Not here**: safe peek (RabbitMQ has none: ``can_peek_safely = False``).

Connection string
-----------------
``amqp://host[:port]/[vhost]`` or ``amqps://...`` (vhost URL-encoded: ``/`` is ``%2F``; empty
means ``/``). Credentials are kept apart, encrypted (``Broker.username`` / password).
``management_url``: ``http://host:15672`` (needed for discovery; ``check`` works without it).
A place's ``scope`` is its vhost; ``""`` means the URL's vhost. One AMQP connection per vhost.

Options (``Broker.options``)
----------------------------
- ``connect_timeout`` (5): seconds to connect over AMQP or to get an HTTP answer.
- ``timeout`` (30): seconds for one AMQP operation.
- ``confirm_timeout`` (60): seconds to wait for one window of publisher confirms.
- ``heartbeat`` (30): AMQP heartbeat in seconds.
- ``vhosts`` (all the user can see): a list of vhosts to discover.

Errors: wrong credentials, an unknown vhost or a missing queue are permanent BrokerErrors; a
refused or dropped connection, a timeout or a 5xx answer are temporary. Messages name the
broker's URL, never the password.

Known limits: pamqp encodes float headers as 32-bit (a 64-bit ``d`` header comes back rounded)
and header strings that are not UTF-8 come back as byte arrays. A message whose ``user_id``
differs from the console's user cannot be published (RabbitMQ would close the channel), so it
is refused with a clear error.
"""
