"""``can`` in every template: ``{% if can.act_on_letters %}`` hides what a role may not use."""

from __future__ import annotations

from console.access.roles import has


class Permissions:
    """Looks each permission up on first use (templates ask for a few per page)."""

    def __init__(self, user) -> None:
        self._user = user
        self._known: dict[str, bool] = {}

    def __getitem__(self, codename: str) -> bool:
        if codename not in self._known:
            self._known[codename] = has(self._user, codename) if self._user is not None else False
        return self._known[codename]


def can(request) -> dict:
    """Context processor: ``can.<permission codename>`` for the signed-in user."""
    user = getattr(request, "user", None)
    return {"can": Permissions(user if user is not None and user.is_authenticated else None)}
