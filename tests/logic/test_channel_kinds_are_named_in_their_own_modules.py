"""A kind of notification channel is one module (console/notifications/kinds/) and one registry
line: no other module or template branches on a channel kind (``kind == "slack"``,
``kind in (...)``, ``Channel.Kind.SLACK``) or lists the kinds from elsewhere than the registry
(``Channel.Kind.values``), so adding a kind edits nothing else."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import console
from console.notifications.registry import KINDS

CONSOLE = Path(console.__file__).parent
OWN = (CONSOLE / "notifications" / "kinds", CONSOLE / "notifications" / "registry.py", CONSOLE / "migrations",
       CONSOLE / "models" / "notify.py")  # the model declares its column's choices
TEMPLATES = CONSOLE.parent / "templates"


def _names_a_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and node.value in KINDS:
        return True
    if isinstance(node, ast.Attribute) and node.attr.lower() in KINDS:
        return isinstance(node.value, ast.Attribute) and node.value.attr == "Kind"
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(_names_a_kind(item) for item in node.elts)


def _branch_lines(source: str) -> set[int]:
    """Lines comparing something with a channel kind, or naming ``Kind.<KIND>`` or ``Channel.Kind``."""
    return {node.lineno for node in ast.walk(ast.parse(source))
            if (isinstance(node, ast.Compare) and any(_names_a_kind(side) for side in [node.left, *node.comparators]))
            or (isinstance(node, ast.Attribute) and _names_a_kind(node))
            or (isinstance(node, ast.Attribute) and node.attr == "Kind" and isinstance(node.value, ast.Name)
                and node.value.id == "Channel")}


def test_no_module_outside_a_kind_branches_on_a_channel_kind():
    modules = [path for path in CONSOLE.rglob("*.py") if not any(path.is_relative_to(own) for own in OWN)]
    assert len(modules) > 100
    found = sorted(f"{path.relative_to(CONSOLE.parent)}:{line}" for path in modules
                   for line in _branch_lines(path.read_text()))
    assert found == []


def test_no_template_branches_on_a_channel_kind():
    kinds = "|".join(KINDS)
    pattern = re.compile(rf"""\.kind\s*(==|!=|in)\s*.*["']({kinds})["']""")
    found = [f"{path.relative_to(TEMPLATES)}" for path in TEMPLATES.rglob("*.html") if pattern.search(path.read_text())]
    assert found == []


def test_the_guard_sees_each_form_of_branch():
    source = ('if channel.kind == "slack":\n    pass\n'
              'if kind in ("webhook", "email"):\n    pass\n'
              'x = Channel.Kind.APPRISE\n'
              'choices = Channel.Kind.values\n')
    assert _branch_lines(source) == {1, 3, 5, 6}
