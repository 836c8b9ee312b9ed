"""The suite's parallel run (tests/parallel.py) keeps every Spark test on one xdist worker and
every Chromium test on one, and refuses at collection a test that uses a broker's, the browser's
or Spark's fixture without its marker (``make test-fast`` and the groups trust the markers).
Each case is a small pytest run of its own (pytester) with the project's plugin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

ROOT = Path(__file__).resolve().parents[2]

PLUGINS = ("-p", "tests.parallel", "-p", "no:django", "-p", "no:randomly", "-p", "no:cacheprovider")

MARKED = '''
import json, os, time
import pytest

def _note(request):
    with open("where.jsonl", "a") as out:
        out.write(json.dumps([request.node.name, os.environ.get("PYTEST_XDIST_WORKER")]) + "\\n")

@pytest.mark.spark
@pytest.mark.parametrize("n", range(6))
def test_spark(request, n):
    _note(request)

@pytest.mark.browser
@pytest.mark.parametrize("n", range(6))
def test_chromium(request, n):
    _note(request)

@pytest.mark.parametrize("n", range(60))
def test_plain(request, n):
    _note(request)
    time.sleep(0.02)  # long enough that a worker done with its group takes some (a busy machine once gave all to one)
'''


@pytest.fixture(autouse=True)
def project_on_the_path(monkeypatch):
    """The runs import tests.parallel from this checkout, as pytest.ini's ``-p`` does; they are no
    xdist worker of this run, whatever runs this test."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


def test_spark_and_chromium_tests_each_run_on_a_single_worker_while_the_rest_spread(pytester):
    pytester.makepyfile(test_groups=MARKED)
    result = pytester.runpytest_subprocess(*PLUGINS, "-n", "3", "--dist", "loadgroup")
    result.assert_outcomes(passed=72)
    ran = [json.loads(line) for line in (pytester.path / "where.jsonl").read_text().splitlines()]
    workers = {kind: {worker for name, worker in ran if name.startswith(f"test_{kind}[")}
               for kind in ("spark", "chromium", "plain")}
    assert len(workers["spark"]) == 1, workers
    assert len(workers["chromium"]) == 1, workers
    assert len(workers["plain"]) > 1, workers  # the others are not held to one worker


def test_a_test_using_a_marked_fixture_without_its_marker_is_refused_by_name(pytester):
    pytester.makeconftest('''
import pytest

@pytest.fixture
def spark():
    return "a session"

@pytest.fixture
def kit():
    return "a RabbitMQ helper"
''')
    pytester.makepyfile(test_unmarked='''
import pytest

def test_forgot_spark(spark):
    pass

@pytest.mark.rabbitmq
def test_said_rabbitmq(kit):
    pass

def test_forgot_rabbitmq(kit):
    pass
''')
    result = pytester.runpytest_subprocess(*PLUGINS, "--collect-only")
    assert result.ret == 4  # a usage error: nothing runs
    refused = result.stderr.str()
    assert "test_unmarked.py::test_forgot_spark uses ['spark'] without @pytest.mark.spark" in refused
    assert "test_unmarked.py::test_forgot_rabbitmq uses ['kit'] without @pytest.mark.rabbitmq" in refused
    assert "test_said_rabbitmq" not in refused
