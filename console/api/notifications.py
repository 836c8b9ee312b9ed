"""``/api/notifications/``: channels, subscriptions and the delivery log (admins), and a test
message through a channel (console.services.channels; sent by console.notifications.delivery)."""

from __future__ import annotations

from django.contrib.auth.models import Group
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.api.filter_schema import parameters_of
from console.models import Channel, DeadPlace, Delivery, SavedView, Subscription
from console.notifications.events import EVENTS
from console.notifications.kinds.base import NotifyError
from console.notifications.registry import KINDS
from console.services.channels import (
    do_add_channel,
    do_change_channel,
    do_delete_channel,
    do_subscribe,
    notify_test,
    user_named,
)
from console.services.filtersets import DeliveryFilterSet
from console.services.parsing import ApiIntegerField, parsed


class ChannelSerializer(MaskedModelSerializer):
    has_secret = serializers.SerializerMethodField()
    target = serializers.CharField(read_only=True, help_text="The target as it may be shown: its credentials "
                                   "(userinfo, query values, a webhook host's path) as ***")
    target_has_credentials = serializers.BooleanField(read_only=True, help_text="Credentials are kept encrypted")

    class Meta:
        model = Channel
        fields = ["id", "name", "kind", "target", "target_has_credentials", "has_secret", "enabled", "created_by",
                  "created_at"]
        read_only_fields = fields

    def get_has_secret(self, channel: Channel) -> bool:
        return bool(channel.secret_encrypted)


class ChannelInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    kind = serializers.ChoiceField(choices=list(KINDS))
    target = serializers.CharField(max_length=1000, help_text="URL (webhook, slack) or e-mail address")
    secret = serializers.CharField(required=False, allow_blank=True, default="", write_only=True,
                                   help_text="Signs a webhook's messages (HMAC-SHA256); kept encrypted, never shown")


class ChannelChangeSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False)
    target = serializers.CharField(max_length=1000, required=False, help_text=(
        "As shown (with ***) keeps the stored target; a changed one needs its credentials typed again"))
    enabled = serializers.BooleanField(required=False)


class SubscriptionSerializer(MaskedModelSerializer):
    user = serializers.CharField(source="user.username", default=None, read_only=True)
    group = serializers.CharField(source="group.name", default=None, read_only=True)

    class Meta:
        model = Subscription
        fields = ["id", "channel", "user", "group", "events", "place", "threshold", "view", "digest_minutes",
                  "created_by", "created_at"]
        read_only_fields = fields


class SubscriptionInputSerializer(serializers.Serializer):
    channel = ApiIntegerField(min_value=1, max_value=2**63 - 1)
    events = serializers.ListField(child=serializers.ChoiceField(choices=list(EVENTS)), required=False, default=list,
                                   help_text="Events heard (view.letters alone, and by default, with view)")
    user = serializers.CharField(required=False, allow_null=True, default=None,
                                 help_text="Username (one of user and group; the caller when neither)")
    group = serializers.CharField(required=False, allow_null=True, default=None, help_text="Name of a group of users")
    place = ApiIntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1)
    threshold = ApiIntegerField(required=False, allow_null=True, default=None, min_value=0,
                                         max_value=2**31 - 1)
    view = ApiIntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1,
                           help_text="A saved view: its new letters (event view.letters), for one user")
    digest_minutes = ApiIntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=1440,
                                     help_text="With view: one message every N minutes with counts and a sample "
                                               "(none: at once)")


class DeliverySerializer(MaskedModelSerializer):
    channel_name = serializers.CharField(source="channel.name", read_only=True)

    class Meta:
        model = Delivery
        fields = ["id", "channel", "channel_name", "event", "subject", "count", "status", "attempts", "last_error",
                  "created_at", "sent_at"]
        read_only_fields = fields


class ChannelList(APIView):
    @extend_schema(responses=ChannelSerializer(many=True))
    def get(self, request):
        return Response(ChannelSerializer(Channel.objects.all(), many=True).data)

    @extend_schema(request=ChannelInputSerializer, responses={201: ChannelSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = ChannelInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        channel = do_add_channel(actor=request.user, **given.validated_data)
        return Response(ChannelSerializer(channel).data, status=status.HTTP_201_CREATED)


class ChannelDetail(APIView):
    @extend_schema(responses=ChannelSerializer)
    def get(self, request, channel_id: int):
        return Response(ChannelSerializer(generics.get_object_or_404(Channel, pk=channel_id)).data)

    @extend_schema(request=ChannelChangeSerializer, responses={200: ChannelSerializer, 400: ErrorSerializer})
    def patch(self, request, channel_id: int):
        channel = generics.get_object_or_404(Channel, pk=channel_id)
        given = ChannelChangeSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        return Response(ChannelSerializer(do_change_channel(channel, actor=request.user, **given.validated_data)).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, channel_id: int):
        """Delete the channel, its subscriptions and its delivery log (audited)."""
        do_delete_channel(generics.get_object_or_404(Channel, pk=channel_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ChannelTest(APIView):
    """Send a test message through the channel now (queued like any message; see the delivery log)."""

    @extend_schema(request=None, responses={202: DeliverySerializer})
    def post(self, request, channel_id: int):
        channel = generics.get_object_or_404(Channel, pk=channel_id)
        return Response(DeliverySerializer(notify_test(channel, actor=request.user)).data,
                        status=status.HTTP_202_ACCEPTED)


class SubscriptionList(APIView):
    @extend_schema(responses=SubscriptionSerializer(many=True))
    def get(self, request):
        subscriptions = visible(request.user, Subscription.objects.select_related("user", "group"))
        return Response(SubscriptionSerializer(subscriptions, many=True).data)

    @extend_schema(request=SubscriptionInputSerializer, responses={201: SubscriptionSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = SubscriptionInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        channel = Channel.objects.filter(pk=data["channel"]).first()
        if channel is None:
            raise NotifyError(f"no channel {data['channel']}")
        place = DeadPlace.objects.filter(pk=data["place"]).first() if data["place"] else None
        if data["place"] and place is None:
            raise NotifyError(f"no dead place {data['place']}")
        group = Group.objects.filter(name=data["group"]).first() if data["group"] else None
        if data["group"] and group is None:
            raise NotifyError(f"no group {data['group']!r}")
        user = user_named(data["user"]) if data["user"] else (None if group else request.user)
        view = SavedView.objects.filter(pk=data["view"]).first() if data["view"] else None
        if data["view"] and view is None:
            raise NotifyError(f"no view {data['view']}")
        subscription = do_subscribe(actor=request.user, channel=channel, events=data["events"], user=user,
                                    group=group, place=place, threshold=data["threshold"], view=view,
                                    digest_minutes=data["digest_minutes"])
        return Response(SubscriptionSerializer(subscription).data, status=status.HTTP_201_CREATED)


class DeliveryList(generics.ListAPIView):
    """The delivery log, newest first (the last LOG_SIZE): each message, its attempts, and why
    one failed; ``?channel=<id>`` for one channel's."""

    serializer_class = DeliverySerializer
    LOG_SIZE = 500

    @extend_schema(parameters=parameters_of(DeliveryFilterSet))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        deliveries = visible(self.request.user, Delivery.objects.select_related("channel"))
        deliveries = parsed(DeliveryFilterSet(self.request.query_params, queryset=deliveries)).qs
        return deliveries[: self.LOG_SIZE]
