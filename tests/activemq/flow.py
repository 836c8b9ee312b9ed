"""The shared operator's path (tests/flow.py), as the ActiveMQ tests import it."""

from tests.flow import capture, discovered, finished, letters_from, move, replay

__all__ = ["capture", "discovered", "finished", "letters_from", "move", "replay"]
