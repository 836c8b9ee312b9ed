"""``/api/brokers/``: list, add, show and discover brokers, and test a definition before adding it.

The password is write-only: answers say ``has_password`` instead, and URLs are shown without
any credentials embedded in them.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as ModelValidationError
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.access.scope import visible
from console.api.errors import BrokerErrorSerializer, ErrorSerializer, broker_failed
from console.api.places import PlaceSerializer, places_with_custody
from console.brokers import BrokerError
from console.brokers.registry import KINDS, adapter_class
from console.models import Broker
from console.services.brokers import (
    BrokerSetupError,
    do_add_broker,
    do_discover,
    split_credentials,
    test_connection,
)
from console.services.keeping import do_keep_new_places


def without_credentials(url: str) -> str:
    """The URL with any ``user:password@`` removed (rows are stored clean; this is a second lock)."""
    if not url:
        return ""
    try:
        return split_credentials(url)[0]
    except BrokerSetupError:
        return url if "@" not in url else ""


class BrokerSerializer(MaskedModelSerializer):
    url = serializers.SerializerMethodField()
    management_url = serializers.SerializerMethodField()
    has_password = serializers.BooleanField(read_only=True)
    capabilities = serializers.SerializerMethodField()

    class Meta:
        model = Broker
        fields = [
            "id", "name", "kind", "url", "management_url", "username", "has_password", "options",
            "capabilities", "reachable", "version", "last_checked_at", "last_discovery_at",
            "last_error", "created_at", "keep_new_places",
        ]
        read_only_fields = fields

    def get_url(self, broker: Broker) -> str:
        return without_credentials(broker.url)

    def get_management_url(self, broker: Broker) -> str:
        return without_credentials(broker.management_url)

    @extend_schema_field(serializers.DictField(child=serializers.BooleanField()))
    def get_capabilities(self, broker: Broker) -> dict[str, bool]:
        try:
            return adapter_class(broker.kind).capabilities()
        except ImportError:
            # The adapter's client library is not installed here: the broker is listed, but
            # the console claims no abilities for it.
            return {}


class BrokerCreateSerializer(serializers.Serializer):
    name = serializers.SlugField(max_length=100)
    kind = serializers.ChoiceField(choices=sorted(KINDS))
    url = serializers.CharField(max_length=500, help_text="Credentials in it are moved to the encrypted password")
    management_url = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)
    username = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    password = serializers.CharField(required=False, default="", allow_blank=True, write_only=True,
                                     trim_whitespace=False, style={"input_type": "password"})
    options = serializers.DictField(required=False, default=dict)


class BrokerConnectionSerializer(BrokerCreateSerializer):
    name = None  # type: ignore[assignment]  # a definition being tried out has no name yet (DRF drops the field)


class ConnectionFactsSerializer(MaskedSerializer):
    ok = serializers.BooleanField()
    facts = serializers.DictField(help_text="What the broker said about itself, e.g. its version")


class BrokerConnectionTest(APIView):
    """Connect with a definition that is not saved: nothing is stored, but the test is audited."""

    @extend_schema(request=BrokerConnectionSerializer,
                   responses={200: ConnectionFactsSerializer, 400: ErrorSerializer, 502: BrokerErrorSerializer})
    def post(self, request):
        given = BrokerConnectionSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            facts = test_connection(actor=request.user, **given.validated_data)
        except BrokerError as exc:
            return broker_failed(exc)
        return Response({"ok": True, "facts": {k: str(v) for k, v in facts.items()}})


class BrokerList(APIView):
    @extend_schema(responses=BrokerSerializer(many=True))
    def get(self, request):
        return Response(BrokerSerializer(visible(request.user, Broker.objects.all()), many=True).data)

    @extend_schema(request=BrokerCreateSerializer, responses={201: BrokerSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = BrokerCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            broker = do_add_broker(actor=request.user, **given.validated_data)
        except ModelValidationError as exc:
            return Response(exc.message_dict, status=status.HTTP_400_BAD_REQUEST)
        return Response(BrokerSerializer(broker).data, status=status.HTTP_201_CREATED)


class BrokerDefaultsSerializer(serializers.Serializer):
    keep_new_places = serializers.BooleanField(help_text="Keep in custody the places discovered from now on")
    reason = serializers.CharField(required=False, default="", allow_blank=True,
                                   help_text="Why (audited; a default names the API when left out)")


class BrokerDetail(generics.RetrieveAPIView):
    """A broker; PATCH sets its default for the places discovery finds from now on
    (``keep_new_places``, audited). Connection settings change on the broker's page."""

    queryset = Broker.objects.all()
    serializer_class = BrokerSerializer
    lookup_url_kwarg = "broker_id"

    @extend_schema(request=BrokerDefaultsSerializer, responses={200: BrokerSerializer, 400: ErrorSerializer})
    def patch(self, request, broker_id: int):
        broker = self.get_object()
        given = BrokerDefaultsSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        keep = given.validated_data["keep_new_places"]
        reason = given.validated_data["reason"] or f"keep_new_places set to {str(keep).lower()} through the API"
        broker = do_keep_new_places(broker, keep, actor=request.user, reason=reason)
        return Response(BrokerSerializer(broker).data)


class BrokerDiscover(APIView):
    @extend_schema(request=None, responses={200: PlaceSerializer(many=True), 502: BrokerErrorSerializer})
    def post(self, request, broker_id: int):
        broker = generics.get_object_or_404(Broker, pk=broker_id)
        try:
            places = do_discover(broker, actor=request.user)
        except BrokerError as exc:
            return broker_failed(exc)
        found = visible(request.user, places_with_custody().filter(pk__in=[p.pk for p in places]))
        return Response(PlaceSerializer(found, many=True).data)
