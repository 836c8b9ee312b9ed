"""Notifications: telling people of what happens, through channels of several kinds.

The room, in the order a message goes through it:

- ``events`` — what can be told (:data:`~console.notifications.events.EVENTS`, the names
  subscriptions take), who hears of an event, and what a message holds (masked as for a
  viewer). :func:`~console.notifications.events.notify` is called where an event happens.
- ``delivery`` — the Delivery rows an event makes (a storm of one event grouped into one), handed
  to Celery after the commit, and sending one attempt at a time with retries and backoff.
- ``registry`` and ``kinds/`` — one module per kind of channel (webhook, slack, email, apprise)
  behind a plain registry of kind -> dotted path, imported on first use. A kind checks its
  target and sends a message (``kinds/base.py``: ``ChannelKind``, ``TransportError``). Adding a
  kind is a module in ``kinds/`` and one registry line; nothing here or above names a kind.

Layer (``.importlinter``): just below ``console.services``, above ``console.access``. Events
are raised from services (custody, group work, safeguards, rules) and jobs, so this package may
not import either: it uses access (masking, scopes), models and Celery by task name only. The
audited changes of channels and subscriptions, and a test message, are services
(console.services.channels); the Celery task ``console.deliver`` (console.jobs.tasks) calls
``delivery.deliver``.
"""
