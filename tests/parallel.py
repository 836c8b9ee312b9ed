"""How the suite runs in parallel (loaded by ``-p tests.parallel`` in pytest.ini).

scripts/test runs pytest-xdist with ``--dist loadgroup``. Each worker has its own test database
(pytest-django), Redis database (below) and tmp folders; broker names carry a per-test
suffix; private broker nodes, Spark and the receivers take free ports. Tests that start a JVM for
Spark or drive Chromium share one worker per kind (``XDIST_GROUPS``), so only one worker pays for
the JVM or the browser; tests that run a keeper process share one too.

A test that needs a broker, the browser or Spark says so with its marker; one that uses such a
fixture without the marker is refused at collection (``MARKED_FIXTURES``), so the groups and
``make test-fast`` (which leaves those markers out) can trust the markers.

Tests marked ``slow`` (a minute or more alone, several on a busy machine) are handed out first.
"""

from __future__ import annotations

import os

import pytest

# Each worker (gw0, gw1, ...) gets a Redis database of its own, so a discovery
# of one worker's test never finds another's streams (pytest-django gives it its own PostgreSQL
# database). Database 0 is for runs without xdist; Redis has 16.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if WORKER.startswith("gw"):
    os.environ.setdefault("DLO_TEST_REDIS_URL", f"redis://127.0.0.1:6379/{1 + int(WORKER[2:]) % 15}")

#: marker -> the xdist group whose one worker runs every test that carries it (the first that
#: applies: a browser test that starts a keeper stays with the browser). Keepers: one keeper-process
#: test at a time, so the crash and scale tests over hundreds of places never overlap each other.
XDIST_GROUPS = {"spark": "spark", "browser": "chromium", "keeper": "keepers"}

#: marker -> the fixtures that need what it stands for: a test using one must carry the marker
#: (``make test-fast`` leaves out the tests marked with a broker, the browser or Spark)
MARKED_FIXTURES = {
    "spark": {"spark", "cluster", "connect_server"}, "browser": {"browser"}, "keeper": {"keeper"},
    "rabbitmq": {"kit", "private_rabbit"}, "nats": {"nats_tool", "private_server"},
    "redis": {"redis_client"}, "activemq": {"amq"},
}


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Before every other plugin's hook (xdist reads the groups into the node ids in its own):
    refuse unmarked tests and give the marked ones their group. After them all (pytest-django
    puts the transactional tests last): the tests marked ``slow`` first, so a worker starts each
    early rather than one worker running it alone at the end."""
    unmarked = [f"{item.nodeid} uses {sorted(fixtures & set(item.fixturenames))} without @pytest.mark.{marker}"
                for item in items for marker, fixtures in MARKED_FIXTURES.items()
                if fixtures & set(item.fixturenames) and item.get_closest_marker(marker) is None]
    if unmarked:
        raise pytest.UsageError("\n".join(unmarked))
    for item in items:
        for marker, group in XDIST_GROUPS.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.xdist_group(group))
                break
    yield
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
