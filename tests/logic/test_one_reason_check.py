"""Every change a person makes says why, and one function checks it: console.refusals.
require_reason. A service that tests ``if not reason`` or words "a reason is required" itself
fails this test."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import console
from console.refusals import Conflict, Refusal, require_reason

CONSOLE = Path(console.__file__).parent
#: A page form's own message for its empty reason field, shown beside the field (the service
#: behind it still checks with require_reason).
FORM_MESSAGES = {"console/web/action_forms.py"}


def _docstrings(tree: ast.Module) -> set[int]:
    owners = [tree, *(node for node in ast.walk(tree)
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
    return {id(owner.body[0].value) for owner in owners
            if owner.body and isinstance(owner.body[0], ast.Expr) and isinstance(owner.body[0].value, ast.Constant)}


def _own_reason_checks() -> list[str]:
    found = []
    for path in sorted(CONSOLE.rglob("*.py")):
        where = str(path.relative_to(CONSOLE.parent))
        if "migrations" in path.parts or where == "console/refusals.py":
            continue
        tree = ast.parse(path.read_text())
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
                    and isinstance(node.operand, ast.Name) and node.operand.id == "reason"):
                found.append(f"{where}:{node.lineno} not reason")
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                  and "reason is required" in node.value.lower() and where not in FORM_MESSAGES):
                found.append(f"{where}:{node.lineno} {node.value!r}")
    return found


def test_no_module_checks_a_reason_by_itself():
    assert _own_reason_checks() == [], "use console.refusals.require_reason"


def test_a_reason_is_stripped_and_none_is_refused_with_the_callers_refusal():
    assert require_reason("  INC-7 triage \n") == "INC-7 triage"
    for missing in ("", "   ", None):
        with pytest.raises(Refusal, match="^a reason is required$"):
            require_reason(missing)
    with pytest.raises(Conflict, match="^a reason is required to refuse a job$") as refused:
        require_reason(" ", Conflict, "to refuse a job")
    assert refused.value.status == 409
