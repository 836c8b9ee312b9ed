"""Brokers: add one (testing the connection first), its page (health, places, what its
adapter can do), changing its credentials, and a read-only look at a place's messages where
the adapter can read them without changing them.

Every change goes through console.services.brokers, which audits it; these views validate,
call and render. A password typed into a form is never rendered back.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.access.scope import visible
from console.brokers import BrokerError
from console.brokers.registry import adapter_class
from console.letters import compression
from console.letters.values import PREVIEW_CHARS, body_preview
from console.models import Broker, DeadPlace, LetterState
from console.services.brokers import (
    BrokerSetupError,
    check_broker,
    do_add_broker,
    do_update_broker,
    peek_place,
    test_connection,
)
from console.web.broker_forms import EditBrokerForm, NewBrokerForm, kind_help, kinds_with_management_url
from console.web.views.places import CAPABILITY_LABELS

#: Messages shown by a look at a place on its broker.
PEEK_LIMIT = 20


def _tried(request, kind: str, connection: dict, broker: Broker | None = None) -> tuple[dict | None, str]:
    """(facts, "") when the broker answered, else (None, why not). On a saved ``broker`` an
    empty password means the stored one, where the services allow it."""
    try:
        return test_connection(actor=request.user, kind=kind, broker=broker, **connection), ""
    except (BrokerError, BrokerSetupError) as exc:
        return None, getattr(exc, "message", str(exc))


def _refusal(exc: Exception) -> str:
    """Why the services refused a definition, for the page."""
    if isinstance(exc, ValidationError):
        return " ".join(exc.messages)
    return str(exc)


def _form_page(request, template: str, form, **context):
    context.update(form=form, management_kinds=" ".join(kinds_with_management_url()), kind_help=kind_help())
    return render(request, template, context, status=400 if form.is_bound else 200)


@login_required
def broker_new(request):
    """Add a broker. Saving tests the connection first and refuses to save a broker that does
    not answer unless "save anyway" is ticked."""
    if request.method != "POST":
        return _form_page(request, "web/brokers_new.html", NewBrokerForm())
    form = NewBrokerForm(request.POST)
    if not form.is_valid():
        return _form_page(request, "web/brokers_new.html", form)
    data = form.cleaned_data
    facts, error = _tried(request, data["kind"], form.connection())
    if error and not data["save_anyway"]:
        return _form_page(request, "web/brokers_new.html", form, test_error=error, refused=True)
    try:
        broker = do_add_broker(actor=request.user, name=data["name"], kind=data["kind"], **form.connection())
    except (BrokerSetupError, ValidationError) as exc:
        return _form_page(request, "web/brokers_new.html", form, test_error=_refusal(exc))
    _record_health(broker)
    if error:
        messages.warning(request, f"Saved {broker.name}, but it did not answer: {error}")
    else:
        messages.success(request, f"Saved {broker.name}: {broker.kind} {facts.get('version', '')} answered.")
    return redirect("broker", broker.pk)


@login_required
@require_POST
def broker_test(request, broker_id: int | None = None):
    """(htmx) Try the definition in the form without saving it. On a saved broker's edit form an
    empty password means the stored one, unless the URLs now lead elsewhere."""
    broker = get_object_or_404(Broker, pk=broker_id) if broker_id else None
    form = EditBrokerForm(request.POST, kind=broker.kind) if broker else NewBrokerForm(request.POST, testing=True)
    context: dict = {}
    if not form.is_valid():
        context["error"] = _errors_text(form)
    else:
        kind = broker.kind if broker else form.cleaned_data["kind"]
        context["facts"], context["error"] = _tried(request, kind, form.connection(), broker)
    return render(request, "web/brokers_test_result.html", context)


def _errors_text(form) -> str:
    """A form's errors on one line, each after its field's label."""
    parts = []
    for name, errors in form.errors.items():
        text = " ".join(errors)
        parts.append(f"{form[name].label}: {text}" if name in form.fields else text)
    return "; ".join(parts)


def _record_health(broker: Broker) -> None:
    """Note whether the saved broker answers (health, not a change; failures are on its page)."""
    try:
        check_broker(broker)
    except BrokerError:
        pass


@login_required
def broker_detail(request, broker_id: int):
    broker = get_object_or_404(Broker, pk=broker_id)
    places = (
        visible(request.user, DeadPlace.objects.filter(broker=broker))
        .annotate(held=Count("letters", filter=Q(letters__state=LetterState.HELD)))
        .order_by("scope", "name")
    )
    try:
        capabilities = adapter_class(broker.kind).capabilities()
    except ImportError:
        capabilities = {}
    context = {
        "broker": broker,
        "places": places,
        "capabilities": [(CAPABILITY_LABELS.get(name, name.replace("_", " ")), able)
                         for name, able in capabilities.items()],
        "can_peek": capabilities.get("peek", False),
    }
    return render(request, "web/brokers_detail.html", context)


@login_required
@require_POST
def broker_check(request, broker_id: int):
    broker = get_object_or_404(Broker, pk=broker_id)
    try:
        facts = check_broker(broker)
    except BrokerError as exc:
        messages.error(request, f"{broker.name} did not answer: {exc.message}")
    else:
        messages.success(request, f"{broker.name} answered: version {facts.get('version', '?')}.")
    return redirect("broker", broker.pk)


@login_required
def broker_edit(request, broker_id: int):
    """Change the URLs, username, password or options; an empty password keeps the stored one.
    Like adding, saving tests the new definition first."""
    broker = get_object_or_404(Broker, pk=broker_id)
    template = "web/brokers_edit.html"
    if request.method != "POST":
        initial = {"url": broker.url, "management_url": broker.management_url, "username": broker.username,
                   "options": broker.options}
        return _form_page(request, template, EditBrokerForm(initial=initial, kind=broker.kind), broker=broker)
    form = EditBrokerForm(request.POST, kind=broker.kind)
    if not form.is_valid():
        return _form_page(request, template, form, broker=broker)
    connection = form.connection()
    _, error = _tried(request, broker.kind, connection, broker)
    if error and not form.cleaned_data["save_anyway"]:
        return _form_page(request, template, form, broker=broker, test_error=error, refused=True)
    try:
        do_update_broker(broker, actor=request.user, **connection)
    except (BrokerSetupError, ValidationError) as exc:
        return _form_page(request, template, form, broker=broker, test_error=_refusal(exc))
    _record_health(broker)
    messages.success(request, f"Saved the new connection settings of {broker.name}.")
    return redirect("broker", broker.pk)


@login_required
def place_peek(request, broker_id: int, place_id: int):
    """The first messages of a place as they sit on the broker, read without changing them."""
    place = get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id, broker_id=broker_id)
    rows, error = [], ""
    try:
        for message in peek_place(place, PEEK_LIMIT):
            head, size = compression.readable_head(message.body[: PREVIEW_CHARS * 4], len(message.body),
                                                   compression.encoding_of(message.properties, message.headers),
                                                   PREVIEW_CHARS * 4)
            rows.append({"message": message, "preview": body_preview(head, size),
                         "size": len(message.body)})
    except BrokerError as exc:
        error = exc.message
    return render(request, "web/brokers_peek.html", {"place": place, "rows": rows, "error": error,
                                                    "limit": PEEK_LIMIT})
