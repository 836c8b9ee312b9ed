"""Every refusal of the console has one base (console.refusals.Refusal), mapped to HTTP once for
the API (console.api.errors.handle_exception) and once for the pages: no API view catches one."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import console
from console.refusals import Refusal

CONSOLE = Path(console.__file__).parent
HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


def _console_exceptions() -> list[type]:
    found = []
    for module in pkgutil.walk_packages([str(CONSOLE)], "console."):
        if module.name.startswith(("console.migrations", "console.pipeline", "console.brokers", "console.letters")):
            # The pipeline's modules need Spark's Java side only when it runs; the brokers' one
            # error for people is BrokerError (console.brokers), with its own mapping (502); the
            # letter's code sits below every layer, and what reads content catches its errors
            # (a body too deep to decode is shown as text).
            continue
        loaded = importlib.import_module(module.name)
        for _, value in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(value, Exception) and value.__module__ == module.name:
                found.append(value)
    return found


def test_every_value_error_the_console_raises_is_a_refusal():
    strays = [f"{cls.__module__}.{cls.__qualname__}" for cls in _console_exceptions()
              if issubclass(cls, ValueError) and not issubclass(cls, Refusal)]
    assert not strays, f"give these console.refusals' base (or one of its kinds): {strays}"


def test_no_api_view_catches_a_refusal_itself():
    refusal_names = {cls.__name__ for cls in _console_exceptions() if issubclass(cls, Refusal)}
    caught = []
    for path in sorted((CONSOLE / "api").glob("*.py")):
        handlers = [node for method in ast.walk(ast.parse(path.read_text()))
                    if isinstance(method, ast.FunctionDef) and method.name in HTTP_METHODS
                    for node in ast.walk(method)]
        for node in handlers:
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                names = [n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)]
                caught += [f"{path.name}:{node.lineno} {name}" for name in names
                           if name in refusal_names and not _reraises(node)]
    assert not caught, f"let these through to console.api.errors.handle_exception: {caught}"


def _reraises(handler: ast.ExceptHandler) -> bool:
    """A handler that ends by raising (the same refusal, or a 404 for what the caller may not
    see) narrows the answer; it does not replace the mapping."""
    return isinstance(handler.body[-1], ast.Raise)
