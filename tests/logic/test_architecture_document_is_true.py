"""docs/architecture.md is written from the code and kept so: it names every top-level package
and module of console/, and every database trigger, both those the migrations create and those
the migrated database holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection

CONSOLE = Path(__file__).resolve().parents[2] / "console"
DOCUMENT = (CONSOLE.parent / "docs" / "architecture.md").read_text()


def test_every_top_level_package_and_module_of_console_is_named():
    rooms = sorted(f"`{path.name}/`" if path.is_dir() else f"`{path.name}`" for path in CONSOLE.iterdir()
                   if not path.name.startswith("__") and (path.suffix == ".py" or (path / "__init__.py").exists()))
    assert len(rooms) > 20
    assert [room for room in rooms if room not in DOCUMENT] == []


def test_every_trigger_the_migrations_create_is_named():
    created = {name for migration in (CONSOLE / "migrations").glob("*.py")
               for name in re.findall(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\s+(\w+)",
                                      migration.read_text(), re.IGNORECASE)}
    assert len(created) >= 16
    assert sorted(name for name in created if f"`{name}`" not in DOCUMENT) == []


@pytest.mark.django_db
def test_every_trigger_of_the_migrated_database_is_named():
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT tgname FROM pg_trigger WHERE NOT tgisinternal")
        live = {name for (name,) in cursor.fetchall()}
    assert live
    assert sorted(name for name in live if f"`{name}`" not in DOCUMENT) == []
