"""Automation as a user (invariant 10): the actor of what a rule does.

A :class:`RuleActor` is the string ``rule:<name>@v<version>`` that the audit and the jobs name,
carrying the person who enabled the rule: it holds exactly that person's permissions
(console.access.roles.has); it takes letters within that person's scope narrowed to the rule's
own broker or place (console.access.scope.scope_of), and publishes where that person may
(console.access.scope.publish_scope_of): a rule's scope chooses its letters, not its targets.
A rule whose enabler lost a role or a scope loses it too.
"""

from __future__ import annotations

from django.contrib.auth.models import User

#: Who acts, or reads: a signed-in user, or a script, command or rule named by a string (a
#: rule's is a RuleActor). The audit records either; the roles and scopes read either.
Actor = User | str


class RuleActor(str):
    user: User | None
    broker_id: int | None
    place_id: int | None

    def __new__(cls, name: str, version: int, *, user: User | None, broker_id: int | None = None,
                place_id: int | None = None) -> RuleActor:
        actor = super().__new__(cls, f"rule:{name}@v{version}")
        actor.user, actor.broker_id, actor.place_id = user, broker_id, place_id
        return actor
