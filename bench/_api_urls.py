"""URLs of the server bench/api.py starts: the site's, and the baseline at /bench/trivial/."""

from django.urls import include, path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class Trivial(APIView):
    """The baseline: an API view with the API's default authentication (the Bearer token),
    permission (a role to read) and throttles, answering a constant."""

    def get(self, request: Request) -> Response:
        return Response({"ok": True})


urlpatterns = [
    path("bench/trivial/", Trivial.as_view()),
    path("", include("oam_site.urls")),
]
