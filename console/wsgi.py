import os

from django.core.wsgi import get_wsgi_application

from console.tracing import telemetry

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
# Before the application is made: the Django instrumentation adds its middleware to the
# settings the handler reads. A Gunicorn worker loads this module after its fork (no --preload).
telemetry.start("web")
application = get_wsgi_application()
