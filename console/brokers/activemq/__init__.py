"""ActiveMQ Classic over STOMP: the shared and individual DLQs as dead places.

See ``adapter.py`` for what it does, its connection string and options.
"""
