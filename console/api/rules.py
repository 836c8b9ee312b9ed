"""``/api/rules/``: handling rules, their versions and their dry run (console.services.rules;
what they do: console.jobs.automation.rules_at_work). Every change is audited; a limited user sees and changes only
the rules of their brokers and places."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.models import Rule
from console.services.parsing import ApiIntegerField
from console.services.rules import (
    ACTIONS,
    MAX_NUMBER,
    THEN,
    describe_action,
    do_create_rule,
    do_delete_rule,
    do_update_rule,
    dry_run,
)
from console.services.rules.checks import CODES
from console.services.rules.matches import described


class RuleSerializer(MaskedModelSerializer):
    scope = serializers.SerializerMethodField(help_text='{} (every place), {"broker": id} or {"place": id}')
    enabled_by = serializers.CharField(source="enabled_by.username", default=None, read_only=True)
    description = serializers.SerializerMethodField(help_text="The action in plain words")
    actor = serializers.SerializerMethodField(help_text="How the audit names what this version does")

    class Meta:
        model = Rule
        fields = ["id", "name", "position", "enabled", "scope", "match", "action", "version", "description",
                  "actor", "enabled_by", "enabled_at", "last_error", "created_at"]
        read_only_fields = fields

    def get_scope(self, rule: Rule) -> dict:
        if rule.place_id is not None:
            return {"place": rule.place_id}
        return {"broker": rule.broker_id} if rule.broker_id is not None else {}

    def get_description(self, rule: Rule) -> str:
        return describe_action(rule.action)

    def get_actor(self, rule: Rule) -> str:
        return f"rule:{rule.name}@v{rule.version}"


class RuleMatchField(serializers.JSONField):
    """A rule's ``match``, checked by console.services.rules.matches; its schema lists the kinds
    of match registered when the schema is made (:class:`RuleMatchSchema`)."""


class RuleMatchSchema(OpenApiSerializerFieldExtension):
    target_class = RuleMatchField

    def map_serializer_field(self, auto_schema: object, direction: str) -> dict:
        return {"type": "object", "additionalProperties": False,
                "description": "Every key given must hold; a letter matches when all do",
                "properties": {kind["key"]: {**kind["schema"], "description": kind["help"]} for kind in described()}}


class RuleInputSerializer(serializers.Serializer):
    """What a rule is made of (every key but ``name`` and ``action`` optional on POST; PATCH
    takes any of them). ``match`` and ``action`` are checked by console.services.rules."""

    name = serializers.CharField(max_length=100, required=False)
    position = ApiIntegerField(required=False, min_value=-MAX_NUMBER, max_value=MAX_NUMBER)
    enabled = serializers.BooleanField(required=False)
    scope = serializers.JSONField(required=False)
    match = RuleMatchField(required=False)
    action = serializers.JSONField(required=False)
    reason = serializers.CharField(required=False, allow_blank=True, default="", help_text="Why (audited)")


class RefusedSerializer(MaskedSerializer):
    """Letters of one action the rule's checks would refuse, for one reason. ``reason`` is text
    naming queues and brokers: masked for a reader who may not see them; the rest is code's."""

    action = serializers.ChoiceField(choices=list(dict.fromkeys([*ACTIONS, *THEN])), help_text="The action refused")
    code = serializers.ChoiceField(choices=CODES, help_text="Why, as code: quarantined, breaker_open, "
                                                            "not_permitted, out_of_scope, target_refused, "
                                                            "broker_unreachable")
    reason = serializers.CharField(help_text="Why, in words")
    count = ApiIntegerField(help_text="How many letters")


class DryRunSerializer(MaskedSerializer):
    """What a rule would do now, checks included: ``by_action`` counts the letters per action,
    ``would_run`` those of them that would run, ``refused`` the others with the reason."""

    #: Action names as keys: made by code.
    safe_fields = ("by_action", "would_run")
    matched = ApiIntegerField(help_text="Held letters it would act on now")
    by_action = serializers.DictField(child=ApiIntegerField(), help_text="How many per action")
    would_run = serializers.DictField(child=ApiIntegerField(),
                                      help_text="How many per action would run (the rest are refused)")
    refused = RefusedSerializer(many=True, help_text="What would be refused, per action and reason")
    sample = serializers.ListField(child=ApiIntegerField(), help_text="Some of their letter ids")


def _rules(user) -> QuerySet:
    return visible(user, Rule.objects.filter(deleted_at__isnull=True)).select_related("enabled_by")


class RuleList(APIView):
    @extend_schema(responses=RuleSerializer(many=True))
    def get(self, request):
        return Response(RuleSerializer(_rules(request.user), many=True).data)

    @extend_schema(request=RuleInputSerializer, responses={201: RuleSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = RuleInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        if "name" not in data or "action" not in data:
            return Response({"detail": "a rule needs a name and an action"}, status=status.HTTP_400_BAD_REQUEST)
        rule = do_create_rule(actor=request.user, **data)
        return Response(RuleSerializer(rule).data, status=status.HTTP_201_CREATED)


class RuleDetail(APIView):
    def _rule(self, request, rule_id: int) -> Rule:
        return generics.get_object_or_404(_rules(request.user), pk=rule_id)

    @extend_schema(responses=RuleSerializer)
    def get(self, request, rule_id: int):
        return Response(RuleSerializer(self._rule(request, rule_id)).data)

    @extend_schema(request=RuleInputSerializer, responses={200: RuleSerializer, 400: ErrorSerializer})
    def patch(self, request, rule_id: int):
        rule = self._rule(request, rule_id)
        given = RuleInputSerializer(data=request.data, partial=True)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        reason = data.pop("reason", "")
        rule = do_update_rule(rule, actor=request.user, reason=reason, **data)
        return Response(RuleSerializer(rule).data)

    @extend_schema(request=None, responses={204: None, 400: ErrorSerializer})
    def delete(self, request, rule_id: int):
        do_delete_rule(self._rule(request, rule_id), actor=request.user,
                       reason=request.query_params.get("reason", ""))
        return Response(status=status.HTTP_204_NO_CONTENT)


class RuleDryRun(APIView):
    """What the rule would do now, were it enabled at its position: held letters it would match
    (among those the caller may see), per action, and some of their ids. Changes nothing."""

    @extend_schema(request=None, responses={200: DryRunSerializer})
    def post(self, request, rule_id: int):
        rule = generics.get_object_or_404(_rules(request.user), pk=rule_id)
        return Response(DryRunSerializer(dry_run(rule, reader=request.user).as_dict(),
                                         context={"request": request}).data)
