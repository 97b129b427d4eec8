"""Erasing a person (/users/<id>/erase/): staff only. The page says first that it cannot be
undone, shows everything that will go (counts per kind) and what it cannot reach, and erases once
the user id is typed again; the receipt (/erasures/<id>/) keeps no content and downloads as JSON."""

from __future__ import annotations

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_http_methods

from memory.curation import Actor
from memory.curation.erasure import erase, preview
from memory.models import ErasureReceipt
from memory.services import get_agent_memory
from memory.views.common import gone, render_page
from memory.web.access import role_of

ADMINS_ONLY = "Only admins (staff) can erase a person."
KIND_LABELS = {
    "profile": "profile",
    "threads": "threads",
    "messages": "messages",
    "memories": "memories",
    "images": "images",
    "links": "links touching their memories",
    "activity_events": "their activity events (views and exports kept without text)",
    "activity_served": "other callers' activity events that served their records (those results and texts cut)",
    "history_entries": "curation history entries (kept as tombstones)",
    "sensitive_dismissals": "decisions that a value of theirs was not sensitive",
    "saved_views": "saved views filtered to them (their names and queries)",
    "import_files": "kept import uploads holding their records (rewritten or deleted)",
}
"""What each count of an erasure is, as the page and the receipt say it."""


def admin_only(request: HttpRequest) -> None:
    if role_of(request.user) != "admin":
        raise PermissionDenied(ADMINS_ONLY)


class ConfirmErasureForm(forms.Form):
    confirm = forms.CharField(
        label="Type the user id to confirm",
        max_length=600,
        strip=False,
        help_text="Exactly as shown above: the erasure starts only when it matches.",
    )

    def __init__(self, *args: object, user_id: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.user_id = user_id

    def clean_confirm(self) -> str:
        value = self.cleaned_data["confirm"]
        if value != self.user_id:
            raise forms.ValidationError("That is not the user id: nothing was erased.")
        return value


def counted(counts: dict[str, int]) -> list[tuple[str, str, int]]:
    """(kind, label, count) in the order of KIND_LABELS, then any other kind."""
    kinds = [*KIND_LABELS, *(kind for kind in counts if kind not in KIND_LABELS)]
    return [(kind, KIND_LABELS.get(kind, kind), counts[kind]) for kind in kinds if kind in counts]


@require_http_methods(["GET", "POST"])
def user_erase(request: HttpRequest, owner_id: str) -> HttpResponse:
    """GET: what an erasure of the user removes and cannot reach; POST: erase, once confirmed."""
    admin_only(request)
    agent_memory = get_agent_memory()
    try:
        plan = preview(agent_memory, owner_id)
    except ValueError:
        return gone(request, "user", owner_id)
    if plan.empty:
        return gone(request, "user", owner_id)
    form = ConfirmErasureForm(request.POST or None, user_id=owner_id)
    if request.method == "POST" and form.is_valid():
        receipt = erase(agent_memory, Actor(request.user), owner_id)
        return redirect("memory:erasure_receipt", receipt.pk)
    return render_page(
        request,
        "erasures/confirm.html",
        {"plan": plan, "owner_id": owner_id, "counts": counted(plan.counts), "form": form},
        status=400 if form.is_bound and not form.is_valid() else 200,
    )


@require_GET
def erasure_list(request: HttpRequest) -> HttpResponse:
    """Every erasure's receipt, newest first."""
    admin_only(request)
    return render_page(request, "erasures/list.html", {"receipts": ErasureReceipt.objects.all()[:200]})


@require_GET
def erasure_receipt(request: HttpRequest, receipt_id: int) -> HttpResponse:
    admin_only(request)
    receipt = get_object_or_404(ErasureReceipt, pk=receipt_id)
    return render_page(request, "erasures/receipt.html", {"receipt": receipt, "counts": counted(receipt.counts)})


@require_GET
def erasure_receipt_json(request: HttpRequest, receipt_id: int) -> HttpResponse:
    admin_only(request)
    receipt = get_object_or_404(ErasureReceipt, pk=receipt_id)
    response = JsonResponse(receipt.as_json(), json_dumps_params={"indent": 2, "sort_keys": True})
    response["Content-Disposition"] = f'attachment; filename="erasure-receipt-{receipt.pk}.json"'
    return response
