"""The file formats letters are exported in: one module per format (console.exports.base says
what each declares), registered below by dotted path (console.kinds). Adding a format is a
module here and a line below (or :func:`register`, for one that lives elsewhere): the export
menus, ``GET /api/letters/export/?format=`` and the audit then know it.

What a letter becomes (its record, masked for the reader) is console.services.letter_export's;
a format only writes records. No Django here.
"""

from __future__ import annotations

from console.exports.base import ExportFormat
from console.kinds import Kinds, instance

#: format name -> dotted path of its ExportFormat class.
KINDS: Kinds[ExportFormat] = Kinds("export format", {
    "jsonl": "console.exports.jsonl.JsonLines",
    "csv": "console.exports.csv_file.CsvFile",
    "parquet": "console.exports.parquet.Parquet",
}, make=instance)


def register(name: str, dotted: str) -> None:
    KINDS.register(name, dotted)


def unregister(name: str) -> None:
    KINDS.unregister(name)
