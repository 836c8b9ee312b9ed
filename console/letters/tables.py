"""Tables of what a broker wrote on a letter, declared by its adapter and shown on the letter's
page (RabbitMQ's x-death). Plain data: console.brokers uses no Django, and the pages render it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """A column's heading; ``numeric`` columns are aligned as numbers."""

    label: str
    numeric: bool = False


@dataclass(frozen=True)
class LetterTable:
    """One table: ``anchor`` names its section on the page, ``note`` follows the title, and each
    row holds one text per column, as shown (console.letters.values.display)."""

    anchor: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    def cells(self) -> list[list[tuple[Column, str]]]:
        """Each row's texts with their columns (a page aligns the numeric ones)."""
        return [list(zip(self.columns, row, strict=True)) for row in self.rows]
