"""Forms for adding a broker and changing how the console reaches one.

The password is write-only: its input never renders a value (not even after a failed submit),
and an empty password on the edit form keeps the one stored.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from console.brokers.registry import KINDS, adapter_class


def kind_choices() -> list[tuple[str, str]]:
    """Every registered kind, labelled by its adapter; one living in this process (no other
    process can reach it) only when DEBUG."""
    choices = []
    for kind in sorted(KINDS):
        try:
            adapter = adapter_class(kind)
        except ImportError:  # the adapter's client library is missing here
            choices.append((kind, kind))
            continue
        if adapter.in_process and not settings.DEBUG:
            continue
        choices.append((kind, adapter.label or kind))
    return choices


def kinds_with_management_url() -> list[str]:
    """Kinds whose adapters need a second, HTTP address (the form shows that field for them)."""
    kinds = []
    for kind in KINDS:
        try:
            if adapter_class(kind).uses_management_url:
                kinds.append(kind)
        except ImportError:
            continue
    return sorted(kinds)


def kind_help() -> dict[str, dict[str, str]]:
    """What the form says for each kind, as its adapter declares it: an example URL and what the
    management URL is (brokers.js shows the chosen kind's)."""
    found = {}
    for kind in KINDS:
        try:
            adapter = adapter_class(kind)
        except ImportError:
            continue
        found[kind] = {"url": adapter.url_example, "management_url": adapter.management_url_help}
    return found


class ConnectionFields(forms.Form):
    """How to reach a broker: the part of a definition a connection test needs."""

    url = forms.CharField(label="URL", max_length=500, widget=forms.TextInput(attrs={"spellcheck": "false"}))
    management_url = forms.CharField(label="Management URL", max_length=500, required=False,
                                     widget=forms.TextInput(attrs={"spellcheck": "false"}))
    username = forms.CharField(max_length=200, required=False,
                               widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}))
    password = forms.CharField(
        required=False, strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
    )
    options = forms.JSONField(
        required=False, initial=dict, help_text="A JSON object; see the adapter's documentation",
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
    )

    def show_kind(self, kind: str) -> None:
        """Say what ``kind``'s adapter declares: its example URL and what its management URL is."""
        help_ = kind_help().get(kind, {})
        if help_.get("url"):
            self.fields["url"].widget.attrs["placeholder"] = help_["url"]
        self.fields["management_url"].help_text = help_.get("management_url", "")

    def clean_options(self) -> dict[str, Any]:
        options = self.cleaned_data.get("options")
        if options in (None, ""):
            return {}
        if not isinstance(options, dict):
            raise forms.ValidationError("Options must be a JSON object, like {\"threshold\": 5}.")
        return options

    def connection(self) -> dict[str, Any]:
        """The cleaned values as keyword arguments of the broker services."""
        fields = ("url", "management_url", "username", "password", "options")
        return {field: self.cleaned_data[field] for field in fields}


class NewBrokerForm(ConnectionFields):
    """A broker to add. ``name`` is optional while only testing the connection."""

    name = forms.SlugField(max_length=100, help_text="Letters, digits, - and _; how the console names it")
    kind = forms.ChoiceField(choices=kind_choices)
    save_anyway = forms.BooleanField(required=False, label="Save even if the connection test fails")

    field_order = ["name", "kind", "url", "management_url", "username", "password", "options", "save_anyway"]

    def __init__(self, *args: Any, testing: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if testing:
            self.fields["name"].required = False
        choices = kind_choices()
        chosen = self.data.get("kind") if self.is_bound else self.initial.get("kind")
        self.show_kind(chosen or (choices[0][0] if choices else ""))


class EditBrokerForm(ConnectionFields):
    """New ways to reach a saved broker; its name and kind stay."""

    save_anyway = forms.BooleanField(required=False, label="Save even if the connection test fails")

    def __init__(self, *args: Any, kind: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["password"].help_text = "Leave empty to keep the stored password"
        self.show_kind(kind)
