"""How many messages a capture asks the broker for at a time: console.brokers.batch_sizing,
where a capture's reader process sizes the batch it takes ahead the same way."""

from console.brokers.batch_sizing import FIRST_BATCH, BatchSizer

__all__ = ["FIRST_BATCH", "BatchSizer"]
