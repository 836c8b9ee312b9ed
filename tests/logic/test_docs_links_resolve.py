"""Every relative link and picture in README.md and docs/*.md points to a file of the tree, so
moving a page or a screenshot cannot leave the reader at a dead link. Links to the web and to an
anchor of the same page are not checked."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: ``[text](target)`` and ``![alt](target)``; the target ends at a space (a title) or ``)``.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)[^)]*\)")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _relative_targets(page: Path) -> list[str]:
    targets = LINK.findall(page.read_text())
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def test_every_relative_link_points_to_a_file():
    dead = [f"{page.relative_to(ROOT)} -> {target}" for page in _pages() for target in _relative_targets(page)
            if not (page.parent / target.split("#", 1)[0]).exists()]
    assert dead == []


def test_the_scan_finds_the_links():
    """Else the test above could pass by seeing nothing: the README links every page of docs/."""
    readme = set(_relative_targets(ROOT / "README.md"))
    assert {f"docs/{page.name}" for page in _pages()[1:]} <= {t.split("#", 1)[0] for t in readme}
    assert any(t.endswith(".png") for t in readme)  # and shows the screenshots
