import os

from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

from console.tracing import telemetry

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
# Before the application is made: the Django instrumentation adds its middleware to the
# settings the handler reads. A Gunicorn worker loads this module after its fork (no --preload).
telemetry.start("web")
django_application = get_wsgi_application()
# /mcp goes to the MCP server for agents (console.agents.http), the rest to Django.
from console.agents.http import dispatched  # noqa: E402 - it reads models: after the apps are loaded

application = dispatched(django_application)
# A setting the system checks refuse (console.security.checks) stops the web process here,
# saying which, instead of at the first request that needs it.
refused = [str(message) for message in checks.run_checks(include_deployment_checks=False) if message.is_serious()]
if refused:
    raise ImproperlyConfigured("the console's settings were refused:\n" + "\n".join(refused))
# A script's first request finds the identity provider's keys read (or being read).
from console.security import access_tokens, provider  # noqa: E402 - after the application is made

if access_tokens.enabled():
    provider.warm()
