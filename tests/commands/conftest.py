"""Running management commands as an operator would, and reading what they printed."""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO

import pytest
from django.core.management import call_command


@dataclass
class Printed:
    out: str
    err: str

    @property
    def all(self) -> str:
        return self.out + self.err


@pytest.fixture
def manage():
    """``manage("discover", "mem")`` runs the command and returns what it printed."""

    def run(*args: str) -> Printed:
        out, err = StringIO(), StringIO()
        call_command(*args, stdout=out, stderr=err)
        return Printed(out.getvalue(), err.getvalue())

    return run
