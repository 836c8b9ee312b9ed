"""The domain: brokers, dead places, dead letters, jobs and the audit chain."""

from console.models import lookups  # noqa: F401  (registers __any)
from console.models.access import AgentGrant, RoleScope
from console.models.analytics import AnalyticsRun, ArrivalCell, BusyName, ObjectiveWeek, OutcomeStat
from console.models.audit import AuditEvent, AuditEventPlace
from console.models.body_schema import BodyMapping, BodySchema
from console.models.broker import Broker
from console.models.claims import ClaimMapping, ClaimMappingLimit, ExternalIdentity, ProviderSession
from console.models.group_work import GroupNote, GroupTriage, LetterMark
from console.models.history import FailureGroupDay, FailureGroupHistory, LakeWatermark
from console.models.job import Job
from console.models.letter import (
    DeadLetter,
    GroupCount,
    LetterDocument,
    LetterFlight,
    LetterSearch,
    LetterState,
    PendingAck,
    UniqueDeath,
)
from console.models.notify import Channel, Delivery, Subscription, ViewMatch
from console.models.objective import Objective
from console.models.origin import Origin
from console.models.place import DeadPlace, PlaceSample
from console.models.redaction import RedactionRule
from console.models.rule import LetterHandling, Rule, RuleInbox, RuleVersion
from console.models.saved_view import SavedView
from console.models.signin import SignInFailure

__all__ = [
    "AnalyticsRun", "ArrivalCell", "AuditEvent", "AuditEventPlace", "BodyMapping", "BodySchema", "Broker", "BusyName",
    "Channel",
    "ClaimMapping",
    "ClaimMappingLimit", "ExternalIdentity", "ProviderSession", "Delivery", "DeadLetter",
    "DeadPlace", "FailureGroupDay", "FailureGroupHistory", "GroupCount", "GroupNote", "GroupTriage",
    "Job",
    "LakeWatermark", "LetterDocument", "LetterFlight", "LetterHandling", "LetterMark", "LetterSearch", "LetterState",
    "Objective", "ObjectiveWeek", "Origin",
    "OutcomeStat",
    "PendingAck", "PlaceSample", "SignInFailure", "RedactionRule", "RoleScope", "AgentGrant", "Rule", "RuleInbox",
    "RuleVersion", "SavedView",
    "Subscription", "UniqueDeath", "ViewMatch",
]
