"""Personal API tokens (/settings/tokens/): a person's tokens, a form to make one, and revocation.

Any role may have tokens, up to its own; admins also see and revoke everyone's. A new token is
shown once, in the answer to the POST that made it: never in a URL, a redirect or the session,
and the answer is not cached.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib import messages
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from memory.models import ApiToken
from memory.views.common import render_page
from memory.web.access import role_of, viewer_required, viewers_may_post
from memory.web.forms.tokens import ApiTokenForm
from memory.web.tokens import TokenError, create_token, revoke, token_role


def listed(tokens: Iterable[ApiToken], reader: AbstractBaseUser) -> list[ApiToken]:
    """Tokens usable first (newest first within each part), each with `acts_as`: the role it acts
    with now, which its owner's role may have lowered since it was made."""
    owners = {reader.pk: reader}  # one user object per owner: role_of looks each one's role up once
    rows = []
    for token in tokens:
        token.user = owners.setdefault(token.user_id, token.user)
        token.acts_as = token_role(token)
        rows.append(token)
    return sorted(rows, key=lambda token: token.revoked_at is not None or token.expired)


def revocable(user: AbstractBaseUser) -> QuerySet[ApiToken]:
    tokens = ApiToken.objects.select_related("user")
    return tokens if role_of(user) == "admin" else tokens.filter(user=user)


@viewers_may_post
@viewer_required
@never_cache
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    """The person's tokens and the form to make one; a POST that makes one answers with this page
    and the new token in it, once."""
    form = ApiTokenForm(request.POST or None, user=request.user)
    created, secret, status = None, None, 200
    if request.method == "POST":
        if form.is_valid():
            try:
                created, secret = create_token(request.user, **form.cleaned_data)
            except TokenError as error:
                form.add_error(error.field, str(error))
            else:
                form = ApiTokenForm(user=request.user)  # empty again, for the next one
        if form.errors:
            status = 400
    others = None
    if role_of(request.user) == "admin":
        others = listed(ApiToken.objects.usable().exclude(user=request.user).select_related("user"), request.user)
    return render_page(
        request,
        "tokens/list.html",
        {
            "form": form,
            "created": created,
            "secret": secret,
            "tokens": listed(ApiToken.objects.filter(user=request.user).select_related("user"), request.user),
            "others": others,
            "memories_api": request.build_absolute_uri(reverse("api:memories")),
        },
        status=status,
    )


@viewers_may_post
@viewer_required
@require_http_methods(["GET", "POST"])
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    """GET: what revoking the token does; POST: revoke it (one's own, or anyone's for an admin)."""
    token = get_object_or_404(revocable(request.user), pk=token_id)
    if request.method == "POST":
        if token.revoked_at is not None:
            messages.info(request, f"The token “{token.name}” was already revoked.")
        else:
            revoke(token)
            messages.success(request, f"Revoked the token “{token.name}”: requests sent with it now get a 401.")
        return redirect("memory:tokens")
    return render_page(
        request,
        "tokens/revoke.html",
        {"token": token, "own": token.user_id == request.user.pk, "cancel_url": reverse("memory:tokens")},
    )
