"""One local SparkSession for the whole test run, a fresh lake per test, and letters made
straight in custody (the pipeline reads custody; how letters got there is other tests' concern)."""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import UTC, datetime, timedelta

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """local[2], two shuffle partitions, no UI: started once, stopped at the end of the run."""
    from pyspark.sql import SparkSession

    from console.pipeline.session import DEFAULTS

    # Loopback only, as every network test here.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # py4j logs at INFO from __del__ after pytest closed its streams.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    builder = SparkSession.builder.master("local[2]").appName("dlo-tests")
    for key, value in {**DEFAULTS, "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
                       "spark.ui.showConsoleProgress": "false", "spark.sql.warehouse.dir": str(warehouse),
                       "spark.driver.memory": "1g"}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def lake(tmp_path, spark):
    """A lake folder of this test's own."""
    return str(tmp_path / "lake")


NOW = datetime.now(UTC).replace(microsecond=0)


class Custody:
    """Makes brokers, places and letters in custody with chosen envelopes and times."""

    def __init__(self) -> None:
        self.count = 0

    def broker(self, name: str = "mem", kind: str = "memory", url: str = "memory://pipeline", **kw):
        from console.services.brokers import do_add_broker

        return do_add_broker(actor="tests", name=name, kind=kind, url=url, **kw)

    def place(self, broker, name: str, scope: str = ""):
        from console.models import DeadPlace

        return DeadPlace.objects.create(broker=broker, name=name, scope=scope)

    def letter(self, place, *, origin: str = "orders", exception: str = "", message: str = "", body: bytes = b"",
               captured_days_ago: float = 0, state: str = "held", resolved_days_ago: float | None = None,
               details: dict | None = None, headers: dict | None = None, **fields):
        """One letter; its fingerprint is the exception's and origin's, as the envelope makes it."""
        from console.letters.envelope import FailureEnvelope
        from console.models import DeadLetter

        self.count += 1
        envelope = FailureEnvelope(origin_queue=origin, exception_type=exception, exception_message=message,
                                   reason=fields.pop("reason", "rejected"))
        captured = NOW - timedelta(days=captured_days_ago)
        letter = DeadLetter.objects.create(
            place=place, broker_id=place.broker_id, state=state, message_id=f"m-{self.count}",
            custody_key=hashlib.sha256(f"{self.count}".encode()).hexdigest(), origin_queue=origin,
            reason=envelope.reason, exception_type=exception, exception_message=message,
            fingerprint=envelope.fingerprint(), envelope_details=details or {}, headers=headers or {},
            body=body, body_size=len(body), last_failed_at=captured, **fields,
        )
        # auto_now_add fields: set the past afterwards.
        changed = NOW - timedelta(days=resolved_days_ago if resolved_days_ago is not None else captured_days_ago)
        DeadLetter.objects.filter(pk=letter.pk).update(captured_at=captured, state_changed_at=changed)
        letter.refresh_from_db()
        return letter


@pytest.fixture
def custody():
    return Custody()
