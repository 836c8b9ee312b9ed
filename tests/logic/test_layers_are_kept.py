"""The layer order of .importlinter holds: brokers use no Django; services use access, models
and brokers; jobs use the pipeline and services; pages, API and commands sit on top; inside the
jobs, the tasks sit on automation, the door, the kinds, the engines and job control in that
order; and no package's modules import each other in a circle. A module that imports upwards or
closes a circle (even inside a function) fails this test with the import named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_layer_imports_only_the_layers_below_it():
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Contracts: 4 kept, 0 broken." in result.stdout
