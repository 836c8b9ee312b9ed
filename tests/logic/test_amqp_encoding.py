"""A publish's frames written by console/brokers/rabbitmq/encoding.py are byte for byte the
frames pamqp writes (a replayed letter leaves as it did before), and what pamqp refuses to
write is refused the same way: the publisher turns it into the letter's refusal."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from pamqp import commands as spec
from pamqp.body import ContentBody
from pamqp.frame import marshal
from pamqp.header import ContentHeader

from console.brokers.rabbitmq import encoding
from console.brokers.rabbitmq.encoding import content_header, publish_frames
from console.brokers.rabbitmq.messages import table

scalars = (st.none() | st.booleans() | st.integers(-(2 ** 64), 2 ** 64) | st.sampled_from([127, 128, -129, 32768, 65535,
                                                                                           65536, 2 ** 31, 2 ** 32])
           | st.floats(width=32) | st.floats() | st.text(max_size=12) | st.binary(max_size=8)
           | st.datetimes(timezones=st.none() | st.just(UTC) | st.just(timezone(timedelta(hours=5))),
                          min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1))
           | st.decimals(allow_nan=True, places=None) | st.tuples(st.integers()))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=6) | st.just("k" * 130), inner, max_size=3), max_leaves=10)
texts = st.text(max_size=12) | st.just("") | st.just("n" * 300)
properties = st.fixed_dictionaries({"headers": st.dictionaries(st.text(max_size=8), values, max_size=6)}, optional={
    "content_type": texts, "message_id": texts, "correlation_id": texts, "app_id": texts,
    "delivery_mode": st.sampled_from([1, 2]), "priority": st.integers(0, 300),
    "timestamp": st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1)),
})


def outcome(write):
    try:
        return "ok", write()
    except Exception as error:  # noqa: BLE001 - what fails, and how, is what is compared
        return "raised", type(error), re.sub(r" at 0x[0-9a-f]+", "", str(error))


def properties_of(values: dict) -> spec.Basic.Properties:
    made = spec.Basic.Properties.__new__(spec.Basic.Properties)  # unvalidated, as any value may come
    for name in spec.Basic.Properties.__slots__:
        setattr(made, name, None)
    made.cluster_id = ""
    for name, value in values.items():
        setattr(made, name, table(value) if name == "headers" else value)
    return made


@settings(max_examples=400, deadline=None)
@given(properties, st.integers(0, 2 ** 40), st.integers(1, 65535))
def test_a_content_header_is_written_as_pamqp_writes_it(values, body_size, channel):
    made = properties_of(values)
    ours = outcome(lambda: content_header(channel, made, body_size))
    theirs = outcome(lambda: marshal(ContentHeader(properties=made, body_size=body_size), channel))
    assert ours == theirs


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.text(max_size=8) | st.integers(-(2 ** 63), 2 ** 63 - 1) | st.booleans()
                       | st.none() | st.lists(st.text(max_size=4), max_size=3), max_size=6))
def test_plain_headers_are_written_without_pamqp(headers):
    made = properties_of({"headers": headers, "message_id": "m-1", "delivery_mode": 2})
    theirs = marshal(ContentHeader(properties=made, body_size=10), 1)
    encoding_marshal, encoding.marshal = encoding.marshal, None  # pamqp is not asked
    try:
        assert content_header(1, made, 10) == theirs
    finally:
        encoding.marshal = encoding_marshal


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=100).filter(lambda key: len(key.encode()) <= 255), st.binary(max_size=300),
       st.integers(1, 120), st.integers(1, 65535))
def test_a_publish_is_written_as_pamqp_and_aiormq_write_it(routing_key, body, frame_max, channel):
    made = properties_of({"headers": {"a": 1}})
    header = content_header(channel, made, len(body))
    chunks = [body[start:start + frame_max] for start in range(0, len(body), frame_max)]
    expected = b"".join([marshal(spec.Basic.Publish(exchange="", routing_key=routing_key, mandatory=True), channel),
                         header, *(marshal(ContentBody(chunk), channel) for chunk in chunks)])
    assert publish_frames(channel, routing_key, header, body, frame_max) == expected


def test_values_pamqp_refuses_are_refused_alike():
    for headers in ({"big": 2 ** 64}, {"nan": Decimal("NaN")}, {"t": (1, 2)}, {"huge": 1e300},
                    {"bad": "\udc80"}, {1: "not a name"}):
        made = properties_of({})
        made.headers = headers
        ours = outcome(lambda: content_header(1, made, 0))  # noqa: B023 - called at once
        theirs = outcome(lambda: marshal(ContentHeader(properties=made, body_size=0), 1))  # noqa: B023 - called at once
        assert ours[0] == theirs[0] == "raised" and ours == theirs, headers

