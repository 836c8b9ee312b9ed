"""The console's pages, mounted at / by console/urls.py."""

from django.contrib.auth import views as auth_views
from django.urls import path

from console.security.signin import SignInView
from console.web.views import (
    actions, approvals, audit, brokers, groups, inventory, jobs, letters, places, redaction, roles, safeguards,
    shovel, tokens,
)

urlpatterns = [
    path("sign-in/", SignInView.as_view(), name="login"),
    path("sign-out/", auth_views.LogoutView.as_view(), name="logout"),
    path("", inventory.inventory, name="inventory"),
    path("brokers/new/", brokers.broker_new, name="broker-new"),
    path("brokers/test/", brokers.broker_test, name="broker-test"),
    path("brokers/<int:broker_id>/", brokers.broker_detail, name="broker"),
    path("brokers/<int:broker_id>/edit/", brokers.broker_edit, name="broker-edit"),
    path("brokers/<int:broker_id>/test/", brokers.broker_test, name="broker-edit-test"),
    path("brokers/<int:broker_id>/check/", brokers.broker_check, name="broker-check"),
    path("brokers/<int:broker_id>/places/<int:place_id>/peek/", brokers.place_peek, name="place-peek"),
    path("brokers/<int:broker_id>/discover/", inventory.discover, name="broker-discover"),
    path("places/<int:place_id>/", places.place_letters, name="place"),
    path("places/<int:place_id>/groups/", groups.group_list, name="place-groups"),
    path("groups/", groups.group_list, name="groups"),
    path("groups/history/", groups.group_history, name="groups-history"),
    path("places/<int:place_id>/capture/", inventory.capture, name="place-capture"),
    path("places/<int:place_id>/shovel/", shovel.place_shovel, name="place-shovel"),
    path("places/<int:place_id>/preview/", actions.action_preview, name="action-preview"),
    path("actions/confirm/", actions.action_confirm, name="action-confirm"),
    path("actions/arrived/", actions.arrived_since_preview, name="action-arrived"),
    path("letters/", letters.letter_list, name="letters"),
    path("letters/<int:letter_id>/", letters.letter_detail, name="letter"),
    path("letters/<int:letter_id>/edit/", letters.letter_edit, name="letter-edit"),
    path("letters/<int:letter_id>/body", letters.letter_body, name="letter-body"),
    path("letters/<int:letter_id>/release/", safeguards.letter_release, name="letter-release"),
    path("origins/", safeguards.origin_list, name="origins"),
    path("origins/<int:origin_id>/close-breaker/", safeguards.origin_close_breaker, name="origin-close-breaker"),
    path("jobs/", jobs.job_list, name="jobs"),
    path("jobs/<int:job_id>/", jobs.job_detail, name="job"),
    path("jobs/<int:job_id>/cancel/", jobs.job_cancel, name="job-cancel"),
    path("jobs/<int:job_id>/pause/", jobs.job_pause, name="job-pause"),
    path("jobs/<int:job_id>/resume/", jobs.job_resume, name="job-resume"),
    path("jobs/<int:job_id>/approve/", approvals.job_approve, name="job-approve"),
    path("jobs/<int:job_id>/refuse/", approvals.job_refuse, name="job-refuse"),
    path("approvals/", approvals.approval_list, name="approvals"),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/new/", tokens.token_create, name="token-create"),
    path("tokens/<int:user_id>/revoke/", tokens.token_revoke, name="token-revoke"),
    path("audit/", audit.audit_list, name="audit"),
    path("audit/export.csv", audit.audit_export_csv, name="audit-export-csv"),
    path("audit/export.json", audit.audit_export_json, name="audit-export-json"),
    path("redaction/", redaction.redaction_rules, name="redaction"),
    path("redaction/<int:rule_id>/delete/", redaction.redaction_rule_delete, name="redaction-delete"),
    path("roles/", roles.role_list, name="roles"),
    path("roles/<int:user_id>/", roles.role_grant, name="role-grant"),
]
