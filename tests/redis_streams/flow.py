"""The shared operator's path (tests/flow.py), as the Redis Streams tests import it."""

from tests.flow import capture, discovered, finished, move, replay

__all__ = ["capture", "discovered", "finished", "move", "replay"]
