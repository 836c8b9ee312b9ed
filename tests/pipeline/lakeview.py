"""Reading a lake back in tests: every dataset's rows, as sorted tuples, and its files."""

from __future__ import annotations

import os

from console.pipeline import lake as lakefs
from console.pipeline.schema import SCHEMAS


def content(spark, lake: str) -> dict[str, list[tuple]]:
    return {name: sorted(tuple(row) for row in lakefs.read(spark, lake, name, schema).collect())
            for name, schema in SCHEMAS.items()}


def files(lake: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(folder, name), lake)
                  for folder, _, names in os.walk(lake) for name in names if name.endswith(".parquet"))
