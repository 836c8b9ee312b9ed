"""The body schemas page (admins): the Protobuf descriptor sets and Avro schemas bodies are read
with (console.decoders), uploaded from a file, and deleted; and the mappings that say which
format the bodies of a place, an origin or a header value are in, and which body field splits
their failure groups. Changes go through
console.services.body_schemas, which checks each file by its format, keeps a limited admin to
their places, and audits."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.access.redaction_policy import for_user
from console.access.scope import visible
from console.decoders import KINDS
from console.models import BodySchema, DeadPlace
from console.services.body_schemas import (
    MAX_BYTES,
    SchemaError,
    changeable_schemas,
    do_create_mapping,
    do_delete_mapping,
    do_delete_schema,
    do_upload_schema,
    visible_mappings,
)


class UploadForm(forms.Form):
    kind = forms.ChoiceField(choices=BodySchema.Kind.choices)
    name = forms.CharField(max_length=200, help_text="What people call it; an upload of the same name replaces it")
    file = forms.FileField(help_text=f"At most {MAX_BYTES // (1024 * 1024)} MiB: protoc --include_imports "
                                     "--descriptor_set_out=orders.pb, or an .avsc")
    registry_id = forms.IntegerField(required=False, min_value=0, max_value=2**32 - 1, label="Registry id",
                                     help_text="Avro: the schema registry's id (Confluent's wire format names it)")
    reason = forms.CharField(max_length=2000, label="Reason (for the audit)")


class MappingForm(forms.Form):
    place = forms.ModelChoiceField(queryset=DeadPlace.objects.none(), required=False,
                                   help_text="Its letters' bodies (leave empty to map an origin or a header alone)")
    origin = forms.CharField(max_length=500, required=False, help_text="The origin queue letters died from")
    header = forms.CharField(max_length=200, required=False)
    header_value = forms.CharField(max_length=500, required=False)
    format = forms.ChoiceField(choices=[], required=False)
    message_type = forms.CharField(max_length=500, required=False,
                                   help_text="Protobuf: the message type; Avro: the schema's full name")
    group_path = forms.CharField(max_length=500, required=False, label="Group by",
                                 help_text="A field of the bodies as read ($.provider): their failure groups split by "
                                           "its value")
    reason = forms.CharField(max_length=2000, label="Reason (for the audit)")

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        place: Any = self.fields["place"]
        place.queryset = visible(user, DeadPlace.objects.select_related("broker"))
        chosen: Any = self.fields["format"]
        chosen.choices = [("", "as the letters say"), *((name, KINDS.get(name).label) for name in KINDS)]


def body_schemas(request):
    """GET: the uploads and mappings, and forms to add them. POST: upload a schema, or add a
    mapping (``mapping`` set)."""
    form = UploadForm(None if "mapping" in request.POST else (request.POST or None), request.FILES or None)
    mapping_form = MappingForm(request.POST if "mapping" in request.POST else None, user=request.user)
    if mapping_form.is_valid():
        try:
            made = do_create_mapping(actor=request.user, **mapping_form.cleaned_data)
        except SchemaError as exc:
            mapping_form.add_error(None, str(exc))
        else:
            messages.success(request, f"Mapped {made}.")
            return redirect("body-schemas")
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > MAX_BYTES:
            form.add_error("file", f"The file is larger than {MAX_BYTES // (1024 * 1024)} MiB.")
        else:
            try:
                saved = do_upload_schema(actor=request.user, kind=form.cleaned_data["kind"],
                                         name=form.cleaned_data["name"], data=upload.read(),
                                         reason=form.cleaned_data["reason"],
                                         registry_id=form.cleaned_data["registry_id"])
            except SchemaError as exc:
                form.add_error("file", str(exc))
            else:
                messages.success(request, f"Uploaded {saved}: it declares {len(saved.declares)} types.")
                return redirect("body-schemas")
    schemas = list(BodySchema.objects.all())
    mappings = list(visible_mappings(request.user).select_related("place__broker"))
    redactor = for_user(request.user)
    if redactor is not None:  # names, what they declare and what a mapping names are text people wrote
        for schema in schemas:
            schema.name, schema.declares = redactor.string(schema.name), redactor.value(schema.declares)
        for mapping in mappings:
            for name in ("origin", "header", "header_value", "message_type", "group_path"):
                setattr(mapping, name, redactor.string(getattr(mapping, name)))
    status = 400 if (form.is_bound and form.errors) or (mapping_form.is_bound and mapping_form.errors) else 200
    return render(request, "web/body_schemas.html", {"schemas": schemas, "form": form, "mappings": mappings,
                                                     "mapping_form": mapping_form}, status=status)


@require_POST
def body_mapping_delete(request, body_mapping_id: int):
    mapping = get_object_or_404(visible_mappings(request.user), pk=body_mapping_id)
    do_delete_mapping(mapping, actor=request.user, reason=request.POST.get("reason", "")[:2000])
    messages.success(request, "Deleted the mapping: its letters are read by what they say again.")
    return redirect("body-schemas")


@require_POST
def body_schema_delete(request, body_schema_id: int):
    schema = get_object_or_404(changeable_schemas(request.user), pk=body_schema_id)
    do_delete_schema(schema, actor=request.user, reason=request.POST.get("reason", "")[:2000])
    messages.success(request, f"Deleted {schema}: its letters are shown as stored again.")
    return redirect("body-schemas")
