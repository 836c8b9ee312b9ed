"""Routes of the REST API under ``/api/``. Every route requires an authenticated user."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import IsAuthenticated

from console.access.api import RolePermission
from console.api import (
    admin,
    analytics,
    approvals,
    audit,
    brokers,
    edit_replay,
    groups,
    jobs,
    letters,
    notifications,
    places,
    rules,
    safeguards,
)

# drf-spectacular serves its schema to anyone unless told otherwise.
_signed_in = [IsAuthenticated, RolePermission]

urlpatterns = [
    path("brokers/", brokers.BrokerList.as_view(), name="api-brokers"),
    path("brokers/test/", brokers.BrokerConnectionTest.as_view(), name="api-brokers-test"),
    path("brokers/<int:broker_id>/", brokers.BrokerDetail.as_view(), name="api-broker"),
    path("brokers/<int:broker_id>/discover/", brokers.BrokerDiscover.as_view(), name="api-broker-discover"),
    path("places/", places.PlaceList.as_view(), name="api-places"),
    path("places/<int:place_id>/", places.PlaceDetail.as_view(), name="api-place"),
    path("places/<int:place_id>/capture/", places.PlaceCapture.as_view(), name="api-place-capture"),
    path("places/<int:place_id>/shovel/", places.PlaceShovel.as_view(), name="api-place-shovel"),
    path("letters/", letters.LetterList.as_view(), name="api-letters"),
    path("letters/<int:letter_id>/", letters.LetterDetail.as_view(), name="api-letter"),
    path("letters/<int:letter_id>/edit-replay/", edit_replay.LetterEditReplay.as_view(), name="api-letter-edit-replay"),
    path("letters/<int:letter_id>/release/", safeguards.LetterRelease.as_view(), name="api-letter-release"),
    path("origins/", safeguards.OriginList.as_view(), name="api-origins"),
    path("origins/<int:origin_id>/close-breaker/", safeguards.OriginCloseBreaker.as_view(),
         name="api-origin-close-breaker"),
    path("analytics/", analytics.AnalyticsView.as_view(), name="api-analytics"),
    path("groups/", groups.GroupList.as_view(), name="api-groups"),
    path("groups/history/", groups.GroupHistory.as_view(), name="api-groups-history"),
    path("groups/<str:fingerprint>/", groups.GroupDetail.as_view(), name="api-group"),
    path("groups/<str:fingerprint>/notes/", groups.GroupNotes.as_view(), name="api-group-notes"),
    path("rules/", rules.RuleList.as_view(), name="api-rules"),
    path("rules/<int:rule_id>/", rules.RuleDetail.as_view(), name="api-rule"),
    path("rules/<int:rule_id>/dry-run/", rules.RuleDryRun.as_view(), name="api-rule-dry-run"),
    path("redaction-rules/", admin.RedactionRuleList.as_view(), name="api-redaction-rules"),
    path("redaction-rules/<int:redaction_rule_id>/", admin.RedactionRuleDetail.as_view(), name="api-redaction-rule"),
    path("roles/", admin.RoleList.as_view(), name="api-roles"),
    path("tokens/", admin.TokenList.as_view(), name="api-tokens"),
    path("notifications/channels/", notifications.ChannelList.as_view(), name="api-channels"),
    path("notifications/channels/<int:channel_id>/", notifications.ChannelDetail.as_view(), name="api-channel"),
    path("notifications/channels/<int:channel_id>/test/", notifications.ChannelTest.as_view(),
         name="api-channel-test"),
    path("notifications/subscriptions/", notifications.SubscriptionList.as_view(), name="api-subscriptions"),
    path("notifications/deliveries/", notifications.DeliveryList.as_view(), name="api-deliveries"),
    path("jobs/", jobs.JobList.as_view(), name="api-jobs"),
    path("jobs/preview/", jobs.JobPreview.as_view(), name="api-jobs-preview"),
    path("jobs/<int:job_id>/", jobs.JobDetail.as_view(), name="api-job"),
    path("jobs/<int:job_id>/cancel/", jobs.JobCancel.as_view(), name="api-job-cancel"),
    path("jobs/<int:job_id>/pause/", jobs.JobPause.as_view(), name="api-job-pause"),
    path("jobs/<int:job_id>/resume/", jobs.JobResume.as_view(), name="api-job-resume"),
    path("jobs/<int:job_id>/approve/", approvals.JobApprove.as_view(), name="api-job-approve"),
    path("jobs/<int:job_id>/refuse/", approvals.JobRefuse.as_view(), name="api-job-refuse"),
    path("approvals/", approvals.ApprovalList.as_view(), name="api-approvals"),
    path("audit/", audit.AuditList.as_view(), name="api-audit"),
    path("audit/verify/", audit.AuditVerify.as_view(), name="api-audit-verify"),
    path("schema/", SpectacularAPIView.as_view(permission_classes=_signed_in), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema", permission_classes=_signed_in),
         name="api-docs"),
]
