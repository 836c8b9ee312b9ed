"""What is special to one broker (RabbitMQ's x-death table, the broker form's example URL and
management URL) is declared by its adapter (console.brokers.<kind>), and the pages render what
adapters declare: no page, template or script names a broker kind, its brand or its headers.
A new ``kind == "..."`` or a broker's name in console/web, templates or static/js fails this test."""

from __future__ import annotations

import re
from pathlib import Path

from console.brokers.registry import KINDS, adapter_class

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*(ROOT / "console" / "web").rglob("*.py"), *(ROOT / "templates").rglob("*.html"),
         *(ROOT / "static" / "js").glob("*.js")]


def _names() -> list[str]:
    """Each kind as code would write it ("rabbitmq"), the brand its label starts with (RabbitMQ,
    save the in-process one's "In-memory") and the headers only one broker writes."""
    names = [f'"{kind}"' for kind in KINDS] + [f"'{kind}'" for kind in KINDS] + ["x-death", "x_death"]
    for kind in KINDS:
        adapter = adapter_class(kind)
        if not adapter.in_process:
            names.append(adapter.label.split()[0])
    return names


def test_no_page_names_a_broker_kind():
    pattern = re.compile("|".join(re.escape(name) for name in _names()), re.IGNORECASE)
    found = sorted(f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
                   for path in PAGES for number, line in enumerate(path.read_text().splitlines(), 1)
                   if pattern.search(line))
    assert found == []
