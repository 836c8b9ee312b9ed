"""NATS JetStream: dead letters found through the server's delivery advisories.

See ``adapter.py`` for what a dead place and a letter are on NATS, and how they move.
"""
