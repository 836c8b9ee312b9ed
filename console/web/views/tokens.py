"""API tokens in the browser: the signed-in user's token (everyone's for an admin), make one
(its key shown once, on the page that made it), revoke one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from console.services.tokens import TokenError, do_create_token, do_revoke_token, may_manage_all, visible_tokens


@login_required
def token_list(request):
    return render(request, "web/tokens.html", {
        "tokens": visible_tokens(request.user), "all_users": may_manage_all(request.user), "new_key": None,
    })


@login_required
@require_POST
def token_create(request):
    """Make a token and show its key in this one answer; it is never shown again."""
    token = do_create_token(actor=request.user, mcp_act=request.POST.get("mcp_act") == "1")
    response = render(request, "web/tokens.html", {
        "tokens": visible_tokens(request.user), "all_users": may_manage_all(request.user), "new_key": token.key,
    })
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request, user_id: int):
    token = get_object_or_404(Token, user_id=user_id)
    try:
        do_revoke_token(token, actor=request.user, reason=request.POST.get("reason", "").strip())
    except TokenError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"The token of {token.user.get_username()} is revoked.")
    return redirect("tokens")
