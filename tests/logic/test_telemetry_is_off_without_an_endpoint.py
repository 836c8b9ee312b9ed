"""The console's telemetry is off unless the standard OTEL_* variables ask for it, and off costs
nothing: a process that loads console/wsgi.py (which starts it) without an OTLP endpoint, or
with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, has not imported the OpenTelemetry SDK
at all. With an endpoint it is on (the same probe, so the probe can tell)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.workers import PROJECT

PROBE = """
import json, sys
import console.wsgi
from console.tracing import telemetry
print(json.dumps([telemetry.enabled(), sorted({m.split('.')[1] for m in sys.modules if m.startswith('opentelemetry.')
                                               and m.split('.')[1] in ('sdk', 'exporter', 'instrumentation')})]))
"""


def probe(**otel: str) -> list:
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    env.update(DJANGO_SETTINGS_MODULE="console.settings", DEBUG="true", **otel)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=PROJECT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("otel", [
    {},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SDK_DISABLED": "true"},
    {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/v1/traces", "OTEL_TRACES_EXPORTER": "none"},
], ids=["no endpoint", "sdk disabled", "exporter none"])
def test_off_imports_no_sdk(otel):
    assert probe(**otel) == [False, []]


def test_an_endpoint_turns_it_on():
    assert probe(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9") == [True, ["exporter", "instrumentation", "sdk"]]
