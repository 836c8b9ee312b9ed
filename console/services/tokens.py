"""API tokens: made, listed and revoked from the tokens page; every change audited.

A user holds at most one token (Django REST framework's ``authtoken``, read from the
``Authorization: Token <key>`` header). Making a new one replaces the old, whose key stops
working at once. Admins (permission ``console.manage_users``) may revoke anyone's.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from rest_framework.authtoken.models import Token

from console.models import AgentGrant
from console.refusals import Refusal
from console.services import audit

#: Who may revoke other users' tokens.
MANAGE_TOKENS_PERMISSION = "console.manage_users"


class TokenError(Refusal):
    """A token change the console refuses, with a message for the person."""


def may_manage_all(user: User) -> bool:
    """Whether ``user`` sees and revokes everyone's tokens, not just their own."""
    return bool(user.is_superuser or user.has_perm(MANAGE_TOKENS_PERMISSION))


def visible_tokens(user: User) -> QuerySet[Token]:
    """The tokens ``user`` may see: their own, or everyone's for an admin."""
    tokens = Token.objects.select_related("user").order_by("user__username")
    return tokens if may_manage_all(user) else tokens.filter(user=user)


@transaction.atomic
def do_create_token(*, actor: User, mcp_act: bool = False) -> Token:
    """A new token for ``actor`` (replacing theirs, if any). Its key is shown to them once.
    ``mcp_act``: an agent holding it may act through the MCP server's acting tools (the
    ``mcp:act`` scope), not only read."""
    replaced = Token.objects.filter(user=actor).delete()[0] > 0
    token = Token.objects.create(user=actor)
    if mcp_act:
        AgentGrant.objects.create(token=token, act=True)
    audit.record("token.created", actor=actor, details={"user": actor.get_username(), "replaced": replaced,
                                                        "key_starts": token.key[:4], "mcp_act": mcp_act})
    return token


@transaction.atomic
def do_revoke_token(token: Token, *, actor: User, reason: str = "") -> None:
    """Revoke a token: the actor's own, or anyone's for an admin."""
    if token.user_id != actor.pk and not may_manage_all(actor):
        raise TokenError("only an admin may revoke another user's token")
    owner, key_starts = token.user.get_username(), token.key[:4]
    token.delete()
    audit.record("token.revoked", actor=actor, reason=reason, details={"user": owner, "key_starts": key_starts})
