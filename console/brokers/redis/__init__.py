"""Redis Streams: the pending entries of consumer groups, and dead streams.

See ``adapter.py`` for what counts as a dead place and how letters are captured and replayed.
This package is ``console.brokers.redis``; its modules import the redis-py client with an
absolute ``import redis``, which names the top-level library, never this package.
"""
