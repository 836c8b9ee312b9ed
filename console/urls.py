from django.urls import include, path

urlpatterns = [
    path("api/", include("console.api.urls")),
    path("", include("console.web.urls")),
]
