"""The three roles as Django groups, and the permissions each holds.

Superusers hold every permission (Django's ModelBackend), so they are admins.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

APP = "console"

VIEW = "view_console"
ACT = "act_on_letters"
SEE_UNREDACTED = "see_unredacted"
PURGE = "purge_letters"
MANAGE_BROKERS = "manage_brokers"
MANAGE_USERS = "manage_users"
MANAGE_REDACTION = "manage_redaction"
#: The right the issue calls ``letters.export``: letters leave the console as files.
EXPORT = "export_letters"

VIEWER, OPERATOR, ADMIN = "viewer", "operator", "admin"

#: Rights a role mapping may withhold from whom it gives a role (console.access.claims): the
#: right -> the permission that withholds it, held through the group of that name. Django's
#: permissions only add up, so a withheld right is a permission of its own that ``has`` reads.
WITHHOLDABLE = {EXPORT: "withhold_export_letters"}

#: Each role holds its own permissions and those of the roles before it.
ROLES: dict[str, list[str]] = {
    VIEWER: [VIEW],
    OPERATOR: [VIEW, ACT, SEE_UNREDACTED, EXPORT],
    ADMIN: [VIEW, ACT, SEE_UNREDACTED, EXPORT, PURGE, MANAGE_BROKERS, MANAGE_USERS, MANAGE_REDACTION],
}


def perm(codename: str) -> str:
    """The ``app_label.codename`` form that ``user.has_perm`` takes."""
    return f"{APP}.{codename}"


def role_holding(codename: str) -> str:
    """The first role that holds a permission (for telling someone what they lack)."""
    return next(role for role, codenames in ROLES.items() if codename in codenames)


def has(user, codename: str) -> bool:
    """Whether a user (or the string actor of a script or command, trusted) holds a permission;
    a rule holds what the person who enabled it holds (console.access.actors)."""
    from console.access.actors import RuleActor

    if isinstance(user, RuleActor):
        return user.user is not None and has(user.user, codename)
    if isinstance(user, str):
        return True
    if not (user and user.is_authenticated and user.is_active and user.has_perm(perm(codename))):
        return False
    withheld = WITHHOLDABLE.get(codename)
    return withheld is None or user.is_superuser or not user.has_perm(perm(withheld))


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
    for withheld in WITHHOLDABLE.values():
        group, _ = Group.objects.get_or_create(name=withheld)
        group.permissions.set([permissions[withheld]])


def role_of(user) -> str:
    """The strongest role a user holds ("admin" for superusers, "" for none)."""
    if user.is_superuser:
        return ADMIN
    held = set(user.groups.values_list("name", flat=True))
    for role in (ADMIN, OPERATOR, VIEWER):
        if role in held:
            return role
    return ""


def limits_of(user) -> list[str]:
    """What the user is limited to, as people read it (removed brokers and places included);
    [] for a user without limits."""
    from console.models import RoleScope

    return [row.label for row in RoleScope.objects.filter(user=user).select_related("broker", "place").order_by("id")]


def set_role(user, role: str) -> None:
    """Give ``user`` exactly the role ``role`` ("" for none), unaudited: for console.services.roles and
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


def set_withheld(user, codenames) -> None:
    """Withhold exactly ``codenames`` (rights of WITHHOLDABLE) from ``user``, unaudited: for
    console.services.claims, which audits the change."""
    from django.contrib.auth.models import Group

    unknown = set(codenames) - set(WITHHOLDABLE)
    if unknown:
        raise ValueError(f"cannot withhold {', '.join(sorted(unknown))}; withholdable: {', '.join(WITHHOLDABLE)}")
    wanted = {WITHHOLDABLE[codename] for codename in codenames}
    if not Group.objects.filter(name__in=WITHHOLDABLE.values()).count() == len(WITHHOLDABLE):
        sync_roles()
    user.groups.remove(*Group.objects.filter(name__in=WITHHOLDABLE.values()).exclude(name__in=wanted))
    user.groups.add(*Group.objects.filter(name__in=wanted))
    for cache in ("_perm_cache", "_user_perm_cache", "_group_perm_cache"):
        user.__dict__.pop(cache, None)


def withheld_from(user) -> list[str]:
    """The rights withheld from ``user`` (WITHHOLDABLE's), as codenames."""
    held = set(user.groups.values_list("name", flat=True))
    return [codename for codename, group in WITHHOLDABLE.items() if group in held]


def user_named(username: str):
    """The active user called ``username``, or None."""
    return get_user_model().objects.filter(username=username, is_active=True).first()
