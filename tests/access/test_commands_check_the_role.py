"""Management commands run as ``--actor USERNAME`` only when that user's role allows them;
grant_role changes roles and scopes, audited."""

from __future__ import annotations

import pkgutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from console.access.commands import COMMAND_PERMISSIONS
from console.access.roles import role_of
from console.management import commands
from console.models import AuditEvent, RoleScope

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_every_command_is_classified():
    names = {module.name for module in pkgutil.iter_modules(commands.__path__)}
    assert names == set(COMMAND_PERMISSIONS)


def test_discover_runs_for_an_operator_and_not_for_a_viewer(memory_broker, people):
    with pytest.raises(CommandError, match="vera may not run discover"):
        _run("discover", "--actor", "vera")
    assert "mem: " in _run("discover", "--actor", "otto")
    assert AuditEvent.objects.get(action="broker.discover").actor_name == "otto"


def test_an_unknown_actor_is_refused(memory_broker):
    with pytest.raises(CommandError, match="not an active user"):
        _run("discover", "--actor", "mallory")


def test_verify_audit_needs_a_role_to_read(people, django_user_model):
    django_user_model.objects.create_user("nemo")
    with pytest.raises(CommandError, match="nemo may not run verify_audit"):
        _run("verify_audit", "--actor", "nemo")
    assert "audit chain verified" in _run("verify_audit", "--actor", "vera")


def test_the_server_may_require_an_actor(memory_broker, settings):
    settings.DLO_CLI_REQUIRE_ACTOR = True
    with pytest.raises(CommandError, match="--actor USERNAME is required"):
        _run("discover")


def test_an_admin_grants_roles_and_scopes_audited_and_an_operator_may_not(memory_broker, people):
    vera = people["viewer"]
    with pytest.raises(CommandError, match="otto may not run grant_role"):
        _run("grant_role", "vera", "admin", "--actor", "otto")
    printed = _run("grant_role", "vera", "operator", "--broker", "mem", "--actor", "ada", "--reason", "on call")
    assert "vera is now operator, limited to mem" in printed
    assert role_of(vera) == "operator"
    assert list(RoleScope.objects.filter(user=vera).values_list("broker__name", flat=True)) == ["mem"]
    granted = AuditEvent.objects.get(action="grant_role")
    assert (granted.actor_name, granted.target, granted.details) == ("ada", "vera", {"before": "viewer",
                                                                                     "after": "operator"})
    assert AuditEvent.objects.get(action="grant_scope").details == {"brokers": ["mem"], "places": [], "before": []}
    assert "vera: operator  limited to mem" in _run("roles", "--actor", "ada")
