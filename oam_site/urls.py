"""Root URLs: the dashboard at /, the REST API under /api/ (its OpenAPI schema and docs beside
it), the MCP endpoint at /mcp/, Django's login and logout views under /accounts/, the health check at /healthz."""

from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from memory.api.docs import docs_page
from memory.mcp.http import endpoint as mcp_endpoint
from memory.views.health import healthz

urlpatterns = [
    # For load balancers and monitoring: no login, JSON, 503 when the store is unreachable.
    path("healthz", healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", include("memory.api.urls")),
    # The schema answers a token or a session (a 401 without either): generated clients fetch it.
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("api/docs/", docs_page(SpectacularSwaggerView.as_view(url_name="api_schema")), name="api_docs"),
    path("api/redoc/", docs_page(SpectacularRedocView.as_view(url_name="api_schema")), name="api_redoc"),
    # MCP's streamable HTTP transport for agents, with the API's tokens (docs/mcp.md).
    # MCP clients are often given ".../mcp" (no slash): answered as is, where APPEND_SLASH's
    # redirect would lose a POST's body.
    path("mcp/", mcp_endpoint, name="mcp"),
    path("mcp", mcp_endpoint),
    path("", include("memory.urls")),
]

handler404 = "memory.api.errors.not_found"
handler400 = "memory.api.errors.bad_request"
