"""Every setting the console reads from the environment is read through console/env.py (so it
may also come from ``NAME_FILE``) and is listed in the README's configuration table, and every
variable listed there is read. The settings read are found in the source, not in a list kept
by hand: a new ``env_int("DLO_...")`` anywhere in console/ fails this test until it is listed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / "console"
ENV_HELPERS = {"env_str", "env_bool", "env_int", "env_float", "env_list"}
#: Names that are settings of the console even where a module reads them some other way.
SETTING_NAME = re.compile(r"^(DLO_|CELERY_|LOG_LEVEL$)")


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path)))
            for path in sorted(CONSOLE.rglob("*.py")) if "migrations" not in path.parts]


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _read_through_env() -> dict[str, list[str]]:
    """Each variable named by a call of an env.py helper, with where it is read."""
    read: dict[str, list[str]] = {}
    for where, tree in _modules():
        if where == "console/env.py":
            continue  # the helpers themselves pass their argument on
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) in ENV_HELPERS:
                first = node.args[0] if node.args else None
                assert isinstance(first, ast.Constant) and isinstance(first.value, str), (
                    f"{where}:{node.lineno}: a setting's name must be written out, for this test to find it")
                read.setdefault(first.value, []).append(f"{where}:{node.lineno}")
    return read


def _is_os_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ"
            and isinstance(node.value, ast.Name) and node.value.id == "os")


def _read_around_env(modules: list[tuple[str, ast.Module]]) -> list[tuple[str, str]]:
    """(where, name) of every ``os.environ`` / ``os.getenv`` read of a literal name outside env.py."""
    found = []
    for where, tree in modules:
        if where == "console/env.py":
            continue
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                func = node.func
                if (func.attr in {"get", "pop"} and _is_os_environ(func.value)) or (
                        func.attr == "getenv" and isinstance(func.value, ast.Name) and func.value.id == "os"):
                    name = node.args[0]
            elif isinstance(node, ast.Subscript) and _is_os_environ(node.value) and isinstance(node.ctx, ast.Load):
                name = node.slice
            elif isinstance(node, ast.Compare) and any(_is_os_environ(right) for right in node.comparators):
                name = node.left
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.append((f"{where}:{node.lineno}", name.value))
    return found


def _listed() -> set[str]:
    """The variables in the first column of the README's configuration table."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows, "the README's configuration table is gone"
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row.split("|")[1])}


def test_every_setting_read_is_listed_with_its_default():
    read, listed = _read_through_env(), _listed()
    assert len(read) >= 60  # the scan finds the settings (a broken scan would pass vacuously)
    missing = {name: places for name, places in read.items() if name not in listed}
    assert not missing, f"read but not in the README's configuration table: {missing}"


def test_every_variable_listed_is_read():
    assert sorted(_listed() - set(_read_through_env())) == []


def test_no_setting_is_read_around_env_py():
    listed = _listed()
    around = [(where, name) for where, name in _read_around_env(_modules())
              if SETTING_NAME.match(name) or name in listed]
    assert around == [], "read straight from os.environ (no NAME_FILE): read it through console/env.py"


def test_the_scan_sees_every_way_of_reading_around_env_py():
    """Else the test above could pass by seeing nothing."""
    source = ('import os\nA = os.environ.get("DLO_A", "x")\nB = os.environ["DLO_B"]\nC = "DLO_C" in os.environ\n'
              'D = os.getenv("LOG_LEVEL")\nos.environ["DLO_E"] = "written, not read"\n')
    found = _read_around_env([("console/probe.py", ast.parse(source))])
    assert sorted(found) == [("console/probe.py:2", "DLO_A"), ("console/probe.py:3", "DLO_B"),
                             ("console/probe.py:4", "DLO_C"), ("console/probe.py:5", "LOG_LEVEL")]
