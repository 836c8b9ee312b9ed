"""``DLO_TRACE_URL`` (issue 34, point 2): the README's templates for Jaeger, Grafana Tempo,
Zipkin and Honeycomb are taken and link a trace; a template that would let an id choose where
the link goes, or that is no template, stops the console at start with a clear error; only a
validated id is ever filled in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from console.env import ConfigError
from console.tracing.links import trace_url, trace_url_template

ROOT = Path(__file__).resolve().parents[2]
TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def readme_templates() -> dict[str, str]:
    section = (ROOT / "README.md").read_text().split("\n## Traces\n", 1)[1].split("\n## ", 1)[0]
    return {row.split("|")[1].strip(): re.search(r"`([^`]+)`", row.split("|")[2])[1]
            for row in section.splitlines() if row.startswith("| ") and "`http" in row}


def test_the_readmes_templates_link_a_trace():
    templates = readme_templates()
    assert set(templates) == {"Jaeger", "Grafana Tempo", "Zipkin", "Honeycomb"}
    for ui, template in templates.items():
        assert trace_url_template(template) == template, ui
        link = trace_url(template, TRACE, SPAN)
        assert TRACE in link and "{" not in link and urlsplit(link).scheme == "https", ui
    assert trace_url(templates["Jaeger"], TRACE, SPAN) == f"https://jaeger.example.com/trace/{TRACE}?uiFind={SPAN}"
    assert trace_url(templates["Jaeger"], TRACE, "") == f"https://jaeger.example.com/trace/{TRACE}?uiFind="


@pytest.mark.parametrize("template, says", [
    ("https://{trace_id}.example.com/", "only in the path"),
    ("https://example.com{trace_id}/x", "only in the path"),
    ("{trace_id}", "absolute http(s) URL"),
    ("javascript:alert('{trace_id}')", "absolute http(s) URL"),
    ("//jaeger.example.com/trace/{trace_id}", "absolute http(s) URL"),
    ("https://jaeger.example.com/trace/", "has no {trace_id}"),
    ("https://jaeger.example.com/trace/{traceId}", "names {traceId}"),
    ("https://jaeger.example.com/trace/{trace_id.__class__}", "names"),
    ("https://jaeger.example.com/trace/{trace_id!r}", "without a format"),
    ("https://jaeger.example.com/trace/{trace_id:>40}", "without a format"),
    ("https://jaeger.example.com/trace/{trace_id", "not a template"),
    ("https://jaeger.example.com/trace/{0}", "names {0}"),
    ("https://jaeger.example.com/trace /{trace_id}", "spaces or control characters"),
])
def test_a_template_that_is_not_one_is_refused(template, says):
    with pytest.raises(ConfigError) as refused:
        trace_url_template(template)
    assert says in str(refused.value)


def test_only_a_validated_id_is_filled_in():
    template = "https://zipkin.example.com/zipkin/traces/{trace_id}?span={span_id}"
    for junk in ("", "0" * 32, TRACE.upper(), TRACE[:-1], "../../admin", "x" * 32, f"{TRACE}?a=b", None):
        assert trace_url(template, junk, SPAN) == ""  # type: ignore[arg-type]
    assert trace_url(template, TRACE, "../x") == f"https://zipkin.example.com/zipkin/traces/{TRACE}?span="
    assert trace_url("", TRACE, SPAN) == ""
    assert trace_url("https://x.example.com/{{literal}}/{trace_id}", TRACE) == f"https://x.example.com/{{literal}}/{TRACE}"


def test_the_console_refuses_to_start_with_a_bad_template():
    env = {**os.environ, "DEBUG": "true", "DLO_TRACE_URL": "https://{trace_id}.evil.example/"}
    started = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
    assert started.returncode != 0
    assert "ConfigError: DLO_TRACE_URL: {trace_id} and {span_id} may stand only in the path" in started.stderr
    env["DLO_TRACE_URL"] = "https://jaeger.example.com/trace/{trace_id}"
    assert subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True,
                          timeout=120).returncode == 0
