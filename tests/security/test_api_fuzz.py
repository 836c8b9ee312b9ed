"""A schemathesis fuzz of the API from its own OpenAPI document gives no server error.

The document is built by drf-spectacular (what /api/schema/ serves), and every request goes
through the Django WSGI application, signed in with an admin's API token, inside the test's
database transaction. Operations that would reach out to a broker over the network (adding,
testing or discovering a broker) are left out: the fuzzer would make up host names.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

#: Operations that connect to brokers at addresses the fuzzer would invent.
NETWORK_OPERATIONS = {
    ("POST", "/api/brokers/"),
    ("POST", "/api/brokers/test/"),
    ("POST", "/api/brokers/{broker_id}/discover/"),
}

schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
schema.app = get_wsgi_application()


@pytest.fixture
def token_header(db, django_user_model, memory_broker, monkeypatch):
    """An admin's token; a broker, a place and letters to find; jobs not sent to Celery."""
    from rest_framework.authtoken.models import Token

    from console.jobs import tasks
    from tests.web.factory import memory_place, store_letter

    monkeypatch.setattr(tasks.run_job, "delay", lambda job_id: None)
    place = memory_place(memory_broker)
    for body in (b'{"order": 1}', b"<script>alert(1)</script>", b"\xff\xfe binary"):
        store_letter(place, body)
    admin = django_user_model.objects.create_superuser("fuzz", password="fuzz-pass-123")
    # Like Django's test client: a request must not close the connection that holds the
    # test's transaction.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield {"Authorization": f"Token {Token.objects.create(user=admin).key}"}
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck), database=None)
def test_no_operation_answers_with_a_server_error(case, token_header):
    if (case.method.upper(), case.operation.path) in NETWORK_OPERATIONS:
        return
    response = case.call(headers=token_header)
    case.validate_response(response, checks=[not_a_server_error])
