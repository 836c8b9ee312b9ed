"""The console's URLs plus one page nobody classified in console.access.policy."""

from django.http import HttpResponse
from django.urls import include, path

urlpatterns = [
    path("forgotten/", lambda request: HttpResponse("anyone?"), name="forgotten-page"),
    path("", include("console.urls")),
]
