"""Saved views: a person's named filters of the memory and thread lists. Anyone who may read the
lists may save views of them: a view is the person's own, not a change to the store."""

from __future__ import annotations

import contextlib

from django.contrib import messages
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.models import SavedView
from memory.views.common import safe_next
from memory.web.access import viewer_required, viewers_may_post
from memory.web.forms.saved_views import SavedViewForm

LISTING_URLS = {SavedView.Listing.MEMORIES: "memory:memory_list", SavedView.Listing.THREADS: "memory:thread_list"}


def saved_views_of(request: HttpRequest, listing: str) -> list[SavedView]:
    """The person's saved views of a listing, by name, for its page."""
    return list(SavedView.objects.filter(user=request.user, listing=listing))


@viewers_may_post
@viewer_required
@require_POST
def saved_view_create(request: HttpRequest) -> HttpResponse:
    """Save the listing's filters under a name (the same name again replaces them), then show it."""
    form = SavedViewForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, f"The view was not saved: {error}")
        return redirect(safe_next(request, reverse("memory:memory_list")))
    data = form.cleaned_data
    with contextlib.suppress(IntegrityError):  # saved twice at once: the other one stands
        SavedView.objects.update_or_create(
            user=request.user, listing=data["listing"], name=data["name"], defaults={"query": data["query"]}
        )
    messages.success(request, f"Saved the view “{data['name']}”.")
    return redirect(f"{reverse(LISTING_URLS[data['listing']])}?{data['query']}")


@viewers_may_post
@viewer_required
@require_POST
def saved_view_delete(request: HttpRequest, view_id: int) -> HttpResponse:
    """Forget one of one's own saved views (another person's is a 404: it is not theirs to see)."""
    view = SavedView.objects.filter(pk=view_id, user=request.user).first()
    if view is None:
        raise Http404("No such saved view.")
    view.delete()
    messages.success(request, f"Deleted the saved view “{view.name}”.")
    return redirect(safe_next(request, reverse(LISTING_URLS[view.listing])))
