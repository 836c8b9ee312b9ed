"""The depths of many places in one call, over one STOMP link.

STOMP has no verb that answers "how many messages wait in this queue", and Debian's ActiveMQ has
neither Jolokia nor JMX nor the statistics plugin, so a depth is counted by browsing (see
``places``). One at a time that is a round trip per place and a wait for each browse's end;
here up to ``WINDOW`` browses run side by side on the one link: their SUBSCRIBEs go out
together, every frame that comes is counted and dropped at once, and a browse that ends (its
``browser:end`` frame) or reaches ``count_limit`` makes room for the next place. Memory stays a
frame or so whatever the depths; the broker still sends every message it counts.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from console.brokers.activemq.messages import destination_of
from console.brokers.activemq.multiplex import MultiLink
from console.brokers.base import BrokerError

#: How many browses run at once. ActiveMQ ends a browse, even of an empty queue, only after a
#: dispatch turn of its own (whatever the window), so a wide window pays that once for many
#: places, where a narrow one pays it again for every few (figures: benchmarks/HISTORY.md,
#: the figures moved out of the code). Memory here does not grow with it (every frame is
#: counted and dropped as it comes); the broker pages in each open browse.
WINDOW = 128


def count(link: MultiLink, names: Sequence[str], *, limit: int, idle_timeout: float) -> dict[str, int]:
    """name -> how many messages its browse saw (at most ``limit``: then a lower bound).

    A name that is no queue yet is counted 0 (browsing makes ActiveMQ create it, empty: STOMP
    cannot ask whether a queue exists). ``idle_timeout``: how long the broker may send nothing
    while browses are open before BrokerError."""
    todo = list(dict.fromkeys(names))
    found: dict[str, int] = {}
    open_: dict[str, str] = {}  # subscription id -> place
    while todo or open_:
        starting = todo[:WINDOW - len(open_)]
        del todo[:len(starting)]
        if starting:
            subs = link.subscribe_all((destination_of(name), {"browser": "true", "ack": "auto"})
                                      for name in starting)
            for sub, name in zip(subs, starting, strict=True):
                open_[sub] = name
                found[name] = 0
        done = []
        for sub, name in open_.items():
            frames = link.waiting(sub)
            while frames:
                if frames.popleft().headers.get("browser") == "end":
                    done.append(sub)
                    break
                found[name] += 1
                if found[name] >= limit:
                    done.append(sub)
                    break
        if done:
            link.unsubscribe_all(done)
            for sub in done:
                del open_[sub]
            continue
        quiet_until = time.monotonic() + idle_timeout
        if open_ and not link.wait_any(quiet_until - time.monotonic()):
            raise BrokerError(f"ActiveMQ at {link.where} stopped sending while its queues were counted")
    return found
