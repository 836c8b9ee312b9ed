"""``/api/views/``: the saved views the caller may open, each with its count of the letters the
caller may see, and the owner's changes (console.services.saved_views); ``subscription/``: the
caller's own subscription to a view's new letters (console.services.channels)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.api.errors import ErrorSerializer
from console.models import SavedView
from console.services.channels import (
    MAX_DIGEST_MINUTES,
    do_subscribe_myself,
    do_unsubscribe_myself,
    my_subscription,
)
from console.services.parsing import ApiIntegerField
from console.services.saved_views import (
    COUNT_BUDGET_MS,
    NAV_COUNT_CAP,
    do_change_view,
    do_delete_view,
    do_save_view,
    letters_filter,
    may_change,
    readable_views,
    view_count,
    view_for,
)


class SavedViewSerializer(MaskedModelSerializer):
    owner = serializers.CharField(source="owner.get_username", read_only=True)
    count = serializers.SerializerMethodField(help_text=f"The letters you may see, counted up to {NAV_COUNT_CAP}; "
                                              f"null when not counted within {COUNT_BUDGET_MS} ms (its letters "
                                              "answer)")
    count_exact = serializers.SerializerMethodField(help_text="False: more than count (or, for a filter on "
                                                    "content you see masked, at least count)")
    letters = serializers.SerializerMethodField(help_text="The view's letters: /api/letters/ with its filter now")
    page = serializers.SerializerMethodField(help_text="The view's page")
    yours = serializers.SerializerMethodField(help_text="Whether you may change or delete it")

    class Meta:
        model = SavedView
        fields = ["id", "name", "description", "owner", "filter", "sharing", "role", "count", "count_exact",
                  "letters", "page", "yours", "created_at", "updated_at"]
        read_only_fields = fields

    safe_fields = ("page",)  # made by code; ``letters`` repeats the filter people typed: masked

    def _counted(self, view: SavedView) -> tuple[int, bool]:
        """Counted once for both fields."""
        if getattr(view, "counted", None) is None:
            view.counted = view_count(view, self.context["request"].user)  # type: ignore[attr-defined]
        return view.counted  # type: ignore[attr-defined]

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_count(self, view: SavedView) -> int | None:
        return self._counted(view)[0]

    def get_count_exact(self, view: SavedView) -> bool:
        return self._counted(view)[1]

    def get_letters(self, view: SavedView) -> str:
        return f"{reverse('api-letters')}?{urlencode(letters_filter(view))}"

    def get_page(self, view: SavedView) -> str:
        return reverse("saved-view", args=[view.pk])

    def get_yours(self, view: SavedView) -> bool:
        return may_change(view, self.context["request"].user)


class SavedViewInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    filter = serializers.DictField(help_text='The Letters page\'s filter keys, and "older_than" in hours '
                                   "(relative to each look)")
    sharing = serializers.ChoiceField(choices=SavedView.Sharing.values, default=SavedView.Sharing.PRIVATE)
    role = serializers.CharField(required=False, allow_blank=True, default="",
                                 help_text="viewer, operator or admin (sharing: role)")


class SavedViewChangeSerializer(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=100)
    description = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    filter = serializers.DictField(required=False)
    sharing = serializers.ChoiceField(required=False, choices=SavedView.Sharing.values)
    role = serializers.CharField(required=False, allow_blank=True)


class SavedViewList(APIView):
    @extend_schema(responses=SavedViewSerializer(many=True))
    def get(self, request):
        """The views you may open (yours, and those shared with everyone or with your role)."""
        views = readable_views(request.user)
        return Response(SavedViewSerializer(views, many=True, context={"request": request}).data)

    @extend_schema(request=SavedViewInputSerializer, responses={201: SavedViewSerializer, 400: ErrorSerializer})
    def post(self, request):
        """Keep a view (audited): a name and a filter; shared with no one unless said."""
        given = SavedViewInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        view = do_save_view(actor=request.user, **given.validated_data)
        return Response(SavedViewSerializer(view, context={"request": request}).data, status=status.HTTP_201_CREATED)


class SavedViewDetail(APIView):
    @extend_schema(responses=SavedViewSerializer)
    def get(self, request, view_id: int):
        return Response(SavedViewSerializer(view_for(request.user, view_id), context={"request": request}).data)

    @extend_schema(request=SavedViewChangeSerializer, responses={200: SavedViewSerializer, 400: ErrorSerializer})
    def patch(self, request, view_id: int):
        """Change it (its owner, or an admin who manages users; audited)."""
        given = SavedViewChangeSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        view = do_change_view(view_for(request.user, view_id), actor=request.user, **given.validated_data)
        return Response(SavedViewSerializer(view, context={"request": request}).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, view_id: int):
        """Delete it (its owner, or an admin who manages users; audited)."""
        do_delete_view(view_for(request.user, view_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MySubscriptionSerializer(MaskedSerializer):
    subscribed = serializers.BooleanField(help_text="Whether you hear of the view's new letters, by e-mail")
    digest_minutes = serializers.IntegerField(allow_null=True, help_text="Every N minutes; null: at once")
    address = serializers.CharField(allow_blank=True, help_text="Where: your account's e-mail address")


class MySubscriptionInputSerializer(serializers.Serializer):
    digest_minutes = ApiIntegerField(required=False, allow_null=True, default=None, min_value=1,
                                     max_value=MAX_DIGEST_MINUTES, help_text="A digest every N minutes; none: at once")


class MySubscription(APIView):
    """Your own subscription to a view's new letters, by e-mail to your account's address: no
    admin needed (console.services.channels.do_subscribe_myself)."""

    @extend_schema(responses=MySubscriptionSerializer)
    def get(self, request, view_id: int):
        return Response(_mine(request.user, view_for(request.user, view_id)))

    @extend_schema(request=MySubscriptionInputSerializer, responses={201: MySubscriptionSerializer,
                                                                    400: ErrorSerializer})
    def post(self, request, view_id: int):
        given = MySubscriptionInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        view = view_for(request.user, view_id)
        do_subscribe_myself(actor=request.user, view=view, digest_minutes=given.validated_data["digest_minutes"])
        return Response(_mine(request.user, view), status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, view_id: int):
        do_unsubscribe_myself(actor=request.user, view=view_for(request.user, view_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _mine(user, view: SavedView) -> dict:
    mine = my_subscription(user, view)
    return {"subscribed": mine is not None, "digest_minutes": mine.digest_minutes if mine else None,
            "address": getattr(user, "email", "") or ""}
