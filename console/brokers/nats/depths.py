"""The trackers of many places at once: one listing of the advisory stream's consumers.

A place's depth is what its tracker consumers have not acknowledged (``advisories.not_captured``).
Asking each tracker's info costs two round trips per place; the stream's consumer listing
(CONSUMER.LIST, 256 infos a page) answers for every place in ``ceil(consumers / 256)`` round
trips. A place whose trackers are not in the listing gets them made (``ensure_trackers``: a few
round trips, once per place in its life).
"""

from __future__ import annotations

import json

from nats.js import JetStreamContext
from nats.js.api import ConsumerInfo

from console.brokers.base import BrokerError, PlaceRef
from console.brokers.nats import advisories


async def consumers_of(js: JetStreamContext, stream: str) -> list[ConsumerInfo]:
    """Every consumer of a stream, page by page (NotFoundError when the stream is gone).

    The listing is read here rather than through ``js.consumers_info``, which fails on a
    ``null`` in it: nats-server lists one for a consumer deleted while it is listed (a place's
    trackers made again, ``advisories.drop_trackers``; seen in CI). Such a consumer is left out."""
    found: list[ConsumerInfo] = []
    offset = 0
    while True:
        answer = await js._api_request(f"{js._prefix}.CONSUMER.LIST.{stream}",
                                       json.dumps({"offset": offset}).encode(), timeout=js._timeout)
        page = answer.get("consumers") or []
        if not page:
            return found
        offset += len(page)
        found.extend(ConsumerInfo.from_response(info) for info in page if info)


async def trackers_of(js: JetStreamContext, advisory_stream: str, places: list[PlaceRef], ack_wait: float
                      ) -> dict[PlaceRef, list[ConsumerInfo]]:
    """Each place's tracker infos, in ``advisories.REASONS`` order; a place that cannot have
    trackers (no stream or consumer named) is left out."""
    listed = {info.name: info for info in await consumers_of(js, advisory_stream)}
    found: dict[PlaceRef, list[ConsumerInfo]] = {}
    for place in places:
        names = [advisories.tracker_name(place.scope, place.name, kind) for kind in advisories.REASONS]
        if all(name in listed for name in names):
            found[place] = [listed[name] for name in names]
            continue
        try:
            found[place] = await advisories.ensure_trackers(js, advisory_stream, place.scope, place.name, ack_wait)
        except BrokerError as exc:
            if not exc.permanent:
                raise
    return found
