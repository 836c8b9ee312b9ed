# syntax=docker/dockerfile:1
#
# Dead Letter Office: one image for the web server and the Celery worker.
#
#   docker build -t dead-letter-office .
#   docker run --rm -e DATABASE_URL=... -e SECRET_KEY=... dead-letter-office python manage.py migrate
#   docker run -p 8000:8000 -e DATABASE_URL=... -e SECRET_KEY=... -e CELERY_BROKER_URL=... \
#       -e ALLOWED_HOSTS=dlo.example.com dead-letter-office
#   docker run -e DATABASE_URL=... -e SECRET_KEY=... -e CELERY_BROKER_URL=... \
#       dead-letter-office celery -A console worker -l info
#   docker run -e DATABASE_URL=... -e SECRET_KEY=... dead-letter-office python manage.py keep
#
# The Spark pipeline (archive, groups, analytics, retention, replay from the archive): the web
# and worker image holds only Spark Connect's pure-Python client (pyspark-client), no Java, and
# runs the pipeline's jobs on a Spark Connect server named by DLO_SPARK_REMOTE=sc://host:15002.
# Where Spark itself runs (spark-submit, a local Spark, a Connect server), Java 17 and the whole
# PySpark are needed: build that image with `--target pipeline`:
#   docker build --target pipeline -t dead-letter-office-pipeline .
#   docker run -e DATABASE_URL=... -e SECRET_KEY=... -e DLO_LAKE_URL=... \
#       dead-letter-office-pipeline python manage.py pipeline archive
#
# No secret is baked in: SECRET_KEY, FIELD_ENCRYPTION_KEY and the URLs come from the
# environment at run time (or from *_FILE, e.g. SECRET_KEY_FILE=/run/secrets/secret_key).

# --- build: wheels for everything the console needs at run time ------------------------------
FROM python:3.11-slim-bookworm AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /build
COPY requirements.txt .
# The test and benchmark tools (pytest, pytest-django, Playwright, DuckDB) stay out of the
# images; the whole PySpark goes only into the pipeline image, the web image has its Connect client
# (the newest pyspark-client on PyPI; Spark Connect serves older clients).
RUN grep -vE '^(pytest|pytest-django|playwright|duckdb)==' requirements.txt > runtime-requirements.txt \
    && grep -vE '^pyspark==' runtime-requirements.txt > web-requirements.txt \
    && echo 'pyspark-client==4.2.0' >> web-requirements.txt \
    && grep -E '^pyspark==' runtime-requirements.txt > pipeline-requirements.txt \
    && pip wheel --wheel-dir /wheels -r web-requirements.txt \
    && pip wheel --wheel-dir /wheels-pipeline -r pipeline-requirements.txt

# --- base: the web and worker runtime ---------------------------------------------------------
FROM python:3.11-slim-bookworm AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=console.settings \
    STATIC_ROOT=/app/staticfiles

RUN groupadd --system --gid 10001 dlo \
    && useradd --system --uid 10001 --gid dlo --home-dir /app --no-create-home --shell /usr/sbin/nologin dlo

# The wheels are mounted for the install only, so they leave no layer behind.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    --mount=type=bind,from=build,source=/build/web-requirements.txt,target=/tmp/requirements.txt \
    pip install --no-cache-dir --no-index --find-links=/wheels -r /tmp/requirements.txt

WORKDIR /app
COPY manage.py ./
COPY console ./console
COPY templates ./templates
COPY static ./static
COPY scripts/healthcheck ./scripts/healthcheck

# Static files are collected now and served by WhiteNoise. Settings refuse to load without a
# SECRET_KEY; DLO_INSECURE_DEFAULTS lets this one build step run without one, and the dummy
# DATABASE_URL keeps it from starting the embedded PostgreSQL (collectstatic needs no database).
# Neither variable stays in the image.
RUN DLO_INSECURE_DEFAULTS=true DATABASE_URL=postgres://unused@localhost/unused \
    python manage.py collectstatic --noinput -v0 \
    && rm -rf /app/var \
    && mkdir -p /app/var \
    && chown dlo:dlo /app/var

# Code and static files belong to root and are read-only for the console's own user; it may
# write only under /app/var (the embedded defaults' data, Celery beat's schedule).
USER dlo
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=6s --start-period=20s --retries=3 \
    CMD ["python", "scripts/healthcheck"]

# Workers: set WEB_CONCURRENCY (gunicorn reads it), default 1.
CMD ["gunicorn", "console.wsgi", "--bind", "0.0.0.0:8000", "--access-logfile", "-", "--timeout", "120"]

# --- pipeline: the runtime plus Java 17 and PySpark ------------------------------------------
FROM base AS pipeline

USER root
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
# The whole PySpark replaces the Connect client (both are the package "pyspark").
RUN --mount=type=bind,from=build,source=/wheels-pipeline,target=/wheels \
    --mount=type=bind,from=build,source=/build/pipeline-requirements.txt,target=/tmp/requirements.txt \
    pip uninstall -y pyspark-client && pip install --no-cache-dir --no-index --find-links=/wheels -r /tmp/requirements.txt
USER dlo
CMD ["python", "manage.py", "pipeline", "archive"]

# --- web (the default target): the console and its Celery worker -----------------------------
FROM base AS web
