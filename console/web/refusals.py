"""The pages' one mapping of refusals (console.refusals) to answers, as console.api.errors is the
API's: a view calls its service and lets a refusal through; this middleware answers it.

- htmx: a fragment with the reason and the refusal's status (htmx leaves the page as it was);
- a form posted from a page of the console: the reason as an error message, back to that page
  (the page the browser says it came from, when it is one of ours), as the views did by hand;
- anything else: a page with the reason, and the status.

Views that re-render their form with the error beside the field (an edit, a rule) still catch
the refusal themselves: that is a better answer than this one, not a different mapping.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme

from console.answers import refused
from console.refusals import Refusal


class RefusalMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, Refusal) or request.path.startswith("/api/"):
            return None
        why = str(exception)
        back = request.META.get("HTTP_REFERER", "")
        posted_from_a_page = (not getattr(request, "htmx", False) and request.method == "POST" and back
                              and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                                                  require_https=request.is_secure()))
        if posted_from_a_page:
            messages.error(request, why)
            return HttpResponseRedirect(back)
        return refused(request, why, exception.status)
