"""Trace context: reading the one a dead letter carries (``context``, plain Python, no Django:
the capture's reader process imports it) and linking it to the site's tracing UI (``links``).

Keep this package's ``__init__`` free of imports: the capture's reader process imports
``console.tracing.context`` for every batch, and the OpenTelemetry SDK is no part of it.
"""
