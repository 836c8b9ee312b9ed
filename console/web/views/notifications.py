"""The notifications page (admins): channels with a "Send a test" button, subscriptions, and the
delivery log (console.services.channels checks and audits every change)."""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.access.scope import OutOfScope, visible
from console.models import Channel, DeadPlace, Delivery, Subscription
from console.notifications.events import EVENTS
from console.notifications.kinds.base import NotifyError
from console.notifications.registry import kind_choices
from console.services.channels import (
    do_add_channel,
    do_change_channel,
    do_delete_channel,
    do_subscribe,
    notify_test,
)
from console.services.parsing import IntegerField


class ChannelForm(forms.Form):
    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(choices=kind_choices)
    target = forms.CharField(max_length=1000)
    secret = forms.CharField(required=False, widget=forms.PasswordInput)


class ChannelChangeForm(forms.Form):
    """A channel's name and target as the page edits them (its kind stays what it is)."""

    name = forms.CharField(max_length=100)
    target = forms.CharField(max_length=1000)
    enabled = forms.BooleanField(required=False)


class SubscriptionForm(forms.Form):
    channel = forms.ModelChoiceField(queryset=Channel.objects.all())
    user = forms.ModelChoiceField(queryset=get_user_model().objects.filter(is_active=True), to_field_name="username")
    events = forms.MultipleChoiceField(choices=list(EVENTS.items()), widget=forms.CheckboxSelectMultiple)
    place = forms.ModelChoiceField(queryset=DeadPlace.objects.select_related("broker"), required=False)
    threshold = IntegerField(required=False, min_value=0, max_value=2**31 - 1)  # the column's integer


def _subscription_form(request, data=None) -> SubscriptionForm:
    form = SubscriptionForm(data, prefix="subscription")
    places = visible(request.user, DeadPlace.objects.select_related("broker"))
    cast(forms.ModelChoiceField, form.fields["place"]).queryset = places
    return form


def notifications(request):
    """Channels, subscriptions and deliveries; an admin limited to some places sees and offers
    only those places (subscriptions and deliveries about others, or about every place or none,
    are left out: console.access.scope)."""
    channel_form = ChannelForm(prefix="channel")
    subscription_form = _subscription_form(request)
    if request.method == "POST":
        try:
            if "channel-name" in request.POST:
                channel_form = ChannelForm(request.POST, prefix="channel")
                if channel_form.is_valid():
                    do_add_channel(actor=request.user, **channel_form.cleaned_data)
                    messages.success(request, f"Channel {channel_form.cleaned_data['name']!r} added.")
                    return redirect("notifications")
            else:
                subscription_form = _subscription_form(request, request.POST)
                if subscription_form.is_valid():
                    do_subscribe(actor=request.user, **subscription_form.cleaned_data)
                    messages.success(request, "Subscription added.")
                    return redirect("notifications")
        except (NotifyError, OutOfScope) as exc:
            messages.error(request, str(exc))
    return render(request, "web/notifications.html", {
        "channels": Channel.objects.all(), "channel_form": channel_form, "subscription_form": subscription_form,
        "subscriptions": visible(request.user, Subscription.objects.select_related(
            "channel", "user", "group", "place__broker")),
        "deliveries": visible(request.user, Delivery.objects.select_related("channel"))[:100],
    })


@require_POST
def channel_change(request, channel_id: int):
    """Rename a channel or point it elsewhere (its target as shown, with ``***``, keeps the stored
    credentials); or delete it, with its subscriptions and delivery log."""
    channel = get_object_or_404(Channel, pk=channel_id)
    try:
        if request.POST.get("delete") == "yes":
            do_delete_channel(channel, actor=request.user)
            messages.success(request, f"Channel {channel.name!r} deleted, with its subscriptions and deliveries.")
        else:
            form = ChannelChangeForm(request.POST)
            if not form.is_valid():
                messages.error(request, "; ".join(f"{field}: {' '.join(str(error) for error in errors)}"
                                                  for field, errors in form.errors.items()))
                return redirect("notifications")
            do_change_channel(channel, actor=request.user, **form.cleaned_data)
            messages.success(request, f"Channel {form.cleaned_data['name']!r} saved.")
    except NotifyError as exc:
        messages.error(request, str(exc))
    return redirect("notifications")


@require_POST
def channel_test(request, channel_id: int):
    channel = get_object_or_404(Channel, pk=channel_id)
    delivery = notify_test(channel, actor=request.user)
    messages.success(request, f"A test message to {channel.name} is on its way (delivery {delivery.pk}, below).")
    return redirect("notifications")
