"""The jobs import what they use at the top of the module: no import of the console hidden
inside a function (the layers and the no-circle contracts of .importlinter make one
unnecessary). The one exception is Spark: the pipeline's modules load pyspark, which an archive
replay needs and nothing else in the web process or the worker loads at start-up."""

from __future__ import annotations

import ast
from pathlib import Path

JOBS = Path(__file__).resolve().parents[2] / "console" / "jobs"
LOADED_WHEN_USED = ("console.pipeline",)


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return [alias.name for alias in node.names]


def test_no_module_of_the_jobs_imports_the_console_inside_a_function():
    hidden = []
    for path in sorted(JOBS.rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    hidden += [f"{path.relative_to(JOBS)}:{node.lineno} {name}" for name in _imported(node)
                               if name.startswith("console") and not name.startswith(LOADED_WHEN_USED)]
    assert hidden == []
