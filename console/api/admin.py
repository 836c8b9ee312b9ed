"""The admin pages' API: redaction rules (``/api/redaction-rules/``), roles and scopes
(``/api/roles/``), and API tokens (``/api/tokens/``), through the same services as the pages
(console.services.redaction, roles, tokens), with the same checks, each change audited."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.access.roles import ROLES, role_of
from console.api.errors import ErrorSerializer
from console.models import AgentGrant, Broker, DeadPlace, RedactionRule
from console.services.claims import sources_seen_by
from console.services.parsing import ApiIntegerField
from console.services.redaction import do_delete_redaction_rule, do_set_redaction_rule
from console.services.roles import do_change_access, limits_seen_by
from console.services.tokens import do_create_token, do_revoke_token, visible_tokens


class RedactionRuleSerializer(MaskedModelSerializer):
    class Meta:
        model = RedactionRule
        fields = ["id", "kind", "pattern", "note", "enabled", "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]


class RedactionRuleList(APIView):
    @extend_schema(responses=RedactionRuleSerializer(many=True))
    def get(self, request):
        return Response(RedactionRuleSerializer(RedactionRule.objects.all(), many=True).data)

    @extend_schema(request=RedactionRuleSerializer, responses={201: RedactionRuleSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = RedactionRuleSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        rule = do_set_redaction_rule(actor=request.user, **given.validated_data)
        return Response(RedactionRuleSerializer(rule).data, status=status.HTTP_201_CREATED)


class RedactionRuleDetail(APIView):
    @extend_schema(request=RedactionRuleSerializer, responses={200: RedactionRuleSerializer, 400: ErrorSerializer})
    def put(self, request, redaction_rule_id: int):
        rule = generics.get_object_or_404(RedactionRule, pk=redaction_rule_id)
        given = RedactionRuleSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        rule = do_set_redaction_rule(actor=request.user, rule=rule, **given.validated_data)
        return Response(RedactionRuleSerializer(rule).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, redaction_rule_id: int):
        do_delete_redaction_rule(generics.get_object_or_404(RedactionRule, pk=redaction_rule_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RoleSerializer(MaskedSerializer):
    user = serializers.CharField(help_text="Username")
    role = serializers.ChoiceField(choices=[*ROLES, ""], help_text='One role, or "" for none')
    limits = serializers.ListField(child=serializers.CharField(), read_only=True,
                                   help_text="Brokers and places the user is limited to (none: unlimited)")
    role_from = serializers.CharField(read_only=True, required=False,
                                   help_text="Where the role came from: the identity provider's groups and the "
                                             "mappings that gave it; absent when set in the console")


class RoleInputSerializer(serializers.Serializer):
    user = serializers.CharField(help_text="Username")
    role = serializers.ChoiceField(choices=[*ROLES, ""], required=False, help_text='One role, or "" for none')
    brokers = serializers.ListField(child=ApiIntegerField(min_value=1, max_value=2**63 - 1), required=False,
                                    help_text="Limit the user to these brokers (with places: to both)")
    places = serializers.ListField(child=ApiIntegerField(min_value=1, max_value=2**63 - 1), required=False,
                                   help_text="Limit the user to these dead places")
    clear_limits = serializers.BooleanField(required=False, default=False, help_text="Lift every limit")
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class RoleList(APIView):
    """Every active user's role and limits; POST changes a user's role and, if given, limits."""

    @extend_schema(responses=RoleSerializer(many=True))
    def get(self, request):
        users = list(get_user_model().objects.filter(is_active=True).select_related("external_identity")
                     .order_by("username"))
        limits = limits_seen_by(request.user)
        sources = sources_seen_by(request.user, users, limits)
        return Response([{"user": user.get_username(), "role": role_of(user), "limits": limits.get(user.pk, []),
                          **({"role_from": sources[user.pk]} if user.pk in sources else {})} for user in users])

    @extend_schema(request=RoleInputSerializer, responses={200: RoleSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = RoleInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        user = get_user_model().objects.filter(username=data["user"], is_active=True).first()
        if user is None:
            return Response({"detail": f"no active user {data['user']!r}"}, status=status.HTTP_400_BAD_REQUEST)
        if user.is_superuser:
            return Response({"detail": f"{user.get_username()} is a superuser: an admin whatever the role says"},
                            status=status.HTTP_400_BAD_REQUEST)
        brokers = list(Broker.objects.filter(pk__in=data.get("brokers", [])))
        places = list(DeadPlace.objects.filter(pk__in=data.get("places", [])))
        if len(brokers) != len(set(data.get("brokers", []))) or len(places) != len(set(data.get("places", []))):
            return Response({"detail": "a broker or place named does not exist"}, status=status.HTTP_400_BAD_REQUEST)
        if (brokers or places) and data["clear_limits"]:
            return Response({"detail": "limits and clear_limits go one at a time"}, status=status.HTTP_400_BAD_REQUEST)
        # An admin limited to some places changes access only within them (403, audited).
        do_change_access(user, actor=request.user, role=data.get("role"), brokers=brokers, places=places,
                         clear_limits=data["clear_limits"], reason=data["reason"])
        return Response({"user": user.get_username(), "role": role_of(user),
                         "limits": limits_seen_by(request.user).get(user.pk, [])})


class TokenSerializer(MaskedSerializer):
    safe_fields = ("id",)  # the first characters of a key the console made

    id = serializers.CharField(source="key_starts", help_text="The key's first four characters (never the key)")
    user = serializers.CharField(source="user.username")
    created = serializers.DateTimeField()
    mcp_act = serializers.BooleanField(help_text="An agent holding it may act through the MCP server")


class NewTokenSerializer(MaskedSerializer):
    safe_fields = ("key",)  # made by the console, shown once to whom it belongs

    key = serializers.CharField(help_text="Shown once, now: keep it")
    user = serializers.CharField(source="user.username")


class TokenCreateSerializer(serializers.Serializer):
    mcp_act = serializers.BooleanField(required=False, default=False,
                                       help_text="An agent holding it may act through the MCP server (mcp:act)")


class TokenList(APIView):
    """Your token (an admin: everyone's), by the first four characters of its key; POST makes
    you a new one (replacing yours), whose key is shown once; DELETE revokes one."""

    @extend_schema(responses=TokenSerializer(many=True))
    def get(self, request):
        tokens = list(visible_tokens(request.user))
        acting = set(AgentGrant.objects.filter(act=True, token__in=tokens).values_list("token_id", flat=True))
        for token in tokens:
            token.key_starts = token.key[:4]
            token.mcp_act = token.key in acting
        return Response(TokenSerializer(tokens, many=True).data)

    @extend_schema(request=TokenCreateSerializer, responses={201: NewTokenSerializer})
    def post(self, request):
        given = TokenCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        token = do_create_token(actor=request.user, mcp_act=given.validated_data["mcp_act"])
        return Response(NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={204: None, 400: ErrorSerializer}, parameters=[
        OpenApiParameter("key_starts", OpenApiTypes.STR, required=True, description="The key's first characters"),
        OpenApiParameter("user", OpenApiTypes.STR, description="Whose token (an admin's choice; default: yours)"),
        OpenApiParameter("reason", OpenApiTypes.STR, description="Why (audited)")])
    def delete(self, request):
        """Revoke a token named by its key's first characters (and its user, for an admin)."""
        key_starts = request.query_params.get("key_starts", "")
        if len(key_starts) < 4:
            return Response({"detail": "key_starts: at least the key's first four characters"},
                            status=status.HTTP_400_BAD_REQUEST)
        user = request.query_params.get("user") or request.user.get_username()
        matches = [t for t in visible_tokens(request.user).filter(user__username=user) if t.key.startswith(key_starts)]
        if len(matches) != 1:  # a query naming nothing: refused like any bad parameter
            return Response({"detail": f"no token of {user} you may see starts with {key_starts!r}"},
                            status=status.HTTP_400_BAD_REQUEST)
        do_revoke_token(matches[0], actor=request.user, reason=request.query_params.get("reason", ""))
        return Response(status=status.HTTP_204_NO_CONTENT)
