"""The three roles as Django groups, and the permissions each holds.

Superusers hold every permission (Django's ModelBackend), so they are admins.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

APP = "console"

VIEW = "view_console"
ACT = "act_on_letters"
SEE_UNREDACTED = "see_unredacted"
PURGE = "purge_letters"
MANAGE_BROKERS = "manage_brokers"
MANAGE_USERS = "manage_users"
MANAGE_REDACTION = "manage_redaction"

VIEWER, OPERATOR, ADMIN = "viewer", "operator", "admin"

#: Each role holds its own permissions and those of the roles before it.
ROLES: dict[str, list[str]] = {
    VIEWER: [VIEW],
    OPERATOR: [VIEW, ACT, SEE_UNREDACTED],
    ADMIN: [VIEW, ACT, SEE_UNREDACTED, PURGE, MANAGE_BROKERS, MANAGE_USERS, MANAGE_REDACTION],
}


def perm(codename: str) -> str:
    """The ``app_label.codename`` form that ``user.has_perm`` takes."""
    return f"{APP}.{codename}"


def has(user, codename: str) -> bool:
    """Whether a user (or the string actor of a script or command, trusted) holds a permission."""
    if isinstance(user, str):
        return True
    return bool(user and user.is_authenticated and user.is_active and user.has_perm(perm(codename)))


def sync_roles(apps=None, **_kwargs) -> None:
    """Create the role groups and give each exactly its permissions (idempotent).

    Runs from the data migration (with historical ``apps``) and after every migrate
    (post_migrate), so a flushed test database gets its groups back too.
    """
    from django.apps import apps as live_apps

    apps = apps or live_apps
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    ContentType = apps.get_model("contenttypes", "ContentType")
    content_type, _ = ContentType.objects.get_or_create(app_label=APP, model="rolescope")
    from console.models.access import RoleScope

    names = dict(RoleScope._meta.permissions)
    permissions = {}
    for codename, name in names.items():
        permissions[codename], _ = Permission.objects.get_or_create(
            content_type=content_type, codename=codename, defaults={"name": name})
    for role, codenames in ROLES.items():
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.set([permissions[c] for c in codenames])


def role_of(user) -> str:
    """The strongest role a user holds ("admin" for superusers, "" for none)."""
    if user.is_superuser:
        return ADMIN
    held = set(user.groups.values_list("name", flat=True))
    for role in (ADMIN, OPERATOR, VIEWER):
        if role in held:
            return role
    return ""


@transaction.atomic
def do_grant_role(user, role: str, *, actor, reason: str = "") -> None:
    """Make ``role`` the user's one role (the other role groups are taken away); audited.

    ``role`` "" takes every role away. Limits to brokers or places are kept as they are: a
    limited user given another role stays limited (:func:`do_set_limits` changes them).
    """
    from console.services import audit

    before = role_of(user)
    set_role(user, role)
    audit.record("grant_role", actor=actor, reason=reason, target=user.get_username(),
                 details={"before": before, "after": role})


def limits_of(user) -> list[str]:
    """What the user is limited to, as people read it (removed brokers and places included);
    [] for a user without limits."""
    from console.models import RoleScope

    return [row.label for row in RoleScope.objects.filter(user=user).select_related("broker", "place").order_by("id")]


@transaction.atomic
def do_set_limits(user, *, brokers=(), places=(), actor, reason: str = "") -> None:
    """Limit ``user`` to exactly these brokers and places; none of either lifts every limit,
    which only an explicit ``--clear-limits`` asks for. Audited (``grant_scope``) with what the
    limits were and are, removed brokers and places included."""
    from console.models import RoleScope
    from console.services import audit

    before = limits_of(user)
    RoleScope.objects.filter(user=user).delete()
    rows = [RoleScope.objects.create(user=user, broker=broker) for broker in brokers]
    rows += [RoleScope.objects.create(user=user, place=place) for place in places]
    user.__dict__.pop("_dlo_scope", None)  # console.access.scope caches the scope on the instance
    audit.record("grant_scope", actor=actor, reason=reason, target=user.get_username(),
                 details={"brokers": [row.label for row in rows if row.broker_id],
                          "places": [row.label for row in rows if row.place_id], "before": before})


def set_role(user, role: str) -> None:
    """Give ``user`` exactly the role ``role`` ("" for none), unaudited: for do_grant_role and
    for setting up tests."""
    from django.contrib.auth.models import Group

    if role and role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
    if not Group.objects.filter(name__in=ROLES).count() == len(ROLES):
        sync_roles()
    user.groups.remove(*Group.objects.filter(name__in=ROLES).exclude(name=role))
    if role:
        user.groups.add(Group.objects.get(name=role))
    # ModelBackend caches permissions on the instance.
    for cache in ("_perm_cache", "_user_perm_cache", "_group_perm_cache"):
        user.__dict__.pop(cache, None)


def user_named(username: str):
    """The active user called ``username``, or None."""
    return get_user_model().objects.filter(username=username, is_active=True).first()
