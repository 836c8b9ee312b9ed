"""Shared fixtures. Tests run against real PostgreSQL (DATABASE_URL, or the embedded one).

How the suite runs in parallel and keeps its workers apart: tests/parallel.py.
"""

from __future__ import annotations

import pytest

#: Django's PBKDF2 (a million iterations) costs a quarter to half a second a hash on this machine,
#: and half the tests make a user; only the tests marked ``password_hashing`` (sign-in and its
#: limits) keep it. PBKDF2 stays second so passwords that commands in subprocesses hashed (the
#: demo's) are still checked.
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", "django.contrib.auth.hashers.PBKDF2PasswordHasher"]


@pytest.fixture(autouse=True)
def fast_password_hashing(request, settings):
    if request.node.get_closest_marker("password_hashing") is None:
        settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings):
    """Every test connection may TRUNCATE the audit: the test runner empties all tables between
    transactional (browser) tests. The audit's TRUNCATE trigger lets only such sessions through."""
    from django.conf import settings

    options = settings.DATABASES["default"].setdefault("OPTIONS", {})
    options["options"] = f"{options.get('options', '')} -c dlo.allow_audit_truncate=on".strip()


@pytest.fixture(autouse=True)
def two_person_rule(request, monkeypatch):
    """Jobs run at once unless the test is marked ``approvals``: most tests are about what a job
    does, not about who approved it (tests/approvals/ are about that)."""
    if request.node.get_closest_marker("approvals") is None:
        from console.jobs.door import approvals

        monkeypatch.setattr(approvals, "needs_approval", lambda job: "")


@pytest.fixture
def operator(request, django_user_model):
    """olga, the user the page, API and browser tests sign in as: an operator
    (console.access.roles), or the role a ``@pytest.mark.role("admin")`` marker names."""
    from console.access.roles import OPERATOR, set_role

    marker = request.node.get_closest_marker("role")
    user = django_user_model.objects.create_user("olga", password="triage-pass-123")
    set_role(user, marker.args[0] if marker else OPERATOR)
    return user


@pytest.fixture
def signed_in(client, operator):
    """Django's test client with the operator's session."""
    client.force_login(operator)
    return client


@pytest.fixture
def admin(django_user_model):
    """ada, with the admin role: purges, brokers, users, redaction rules."""
    from console.access.roles import ADMIN, set_role

    user = django_user_model.objects.create_user("ada", password="admin-pass-123")
    set_role(user, ADMIN)
    return user


@pytest.fixture
def memory_broker():
    """A fresh in-memory broker named after the test, and its Broker row."""
    from console.brokers.memory.adapter import MemoryBroker
    from console.services.brokers import do_add_broker

    MemoryBroker.instances.pop("test", None)
    fake = MemoryBroker.named("test")
    broker = do_add_broker(actor="tests", name="mem", kind="memory", url="memory://test")
    yield fake, broker
    MemoryBroker.instances.pop("test", None)


@pytest.fixture
def filesystem_transport(tmp_path, monkeypatch):
    """Send this test's Celery tasks to a folder of its own; give the same folder to the
    worker processes of tests.workers."""
    from console.celery import app
    from console.embedded import filesystem_broker_options

    def forget_connections() -> None:
        # Both the connection pool and the producer pool remember the old folder; closing the
        # app drops only the first, and a second test would then queue into the first's folder.
        app.close()
        app.amqp._producer_pool = None

    folder = tmp_path / "celery"
    monkeypatch.setenv("CELERY_FILESYSTEM_DIR", str(folder))
    saved = (app.conf.broker_url, app.conf.broker_transport_options)
    forget_connections()
    app.conf.broker_url = "filesystem://"
    app.conf.broker_transport_options = filesystem_broker_options()
    yield folder
    forget_connections()
    app.conf.broker_url, app.conf.broker_transport_options = saved


@pytest.fixture
def keeper(tmp_path, filesystem_transport):
    """A ``manage.py keep`` process on the test database (tests.workers.Keeper), not yet
    started; stopped (SIGTERM) at the end. Tests using it need ``django_db(transaction=True)``
    so the keeper sees what they commit."""
    from tests.workers import Keeper

    process = Keeper(filesystem_transport, tmp_path / "keeper.log")
    yield process
    process.stop()
    process.kill()


@pytest.fixture
def http():
    """A real HTTP receiver on loopback (tests.notifications.receivers): webhooks, Slack and
    the other channels' deliveries, as they arrived."""
    from tests.notifications.receivers import HttpReceiver

    receiver = HttpReceiver()
    yield receiver
    receiver.close()


@pytest.fixture
def smtp(settings):
    """A real SMTP server on loopback (aiosmtpd, tests.notifications.receivers) that the e-mail
    channels send to: the messages as they arrived."""
    from tests.notifications.receivers import SmtpReceiver

    receiver = SmtpReceiver()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", receiver.port
    yield receiver
    receiver.close()


@pytest.fixture
def receiver():
    """A real OTLP/HTTP endpoint on loopback (tests.otlp_receiver) for the telemetry tests."""
    from tests.otlp_receiver import OtlpReceiver

    endpoint = OtlpReceiver()
    yield endpoint
    endpoint.close()


@pytest.fixture
def traced_worker(filesystem_transport, tmp_path, receiver):
    """A real Celery worker whose telemetry is on (the standard OTEL_* variables only),
    exporting to ``receiver`` at once; the JobWatch that follows its jobs."""
    from tests.workers import JobWatch, Worker

    worker = Worker(filesystem_transport, tmp_path / "worker.log", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
                    OTEL_SERVICE_NAME="dlo-under-test", OTEL_BSP_SCHEDULE_DELAY="100", DLO_REPLAY_TRACE="link")
    worker.start()
    yield JobWatch(worker, wait_seconds=60)
    worker.kill()
