"""Images: the page, the bytes (authenticated, with their stored content type), edit, describe
again with the LLM, and delete."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_http_methods, require_POST

from memory.curation import CurationError
from memory.engine import stored_image_size
from memory.models import CurationEntry, ObjectKind
from memory.services import get_agent_memory
from memory.views.common import Confirmed, confirm_delete, curation, gone, render_page, saved, submit
from memory.web.access import curator_required, viewer_required
from memory.web.audit import viewed
from memory.web.forms.records import ImageForm


@viewer_required
def image_detail(request: HttpRequest, image_id: str) -> HttpResponse:
    agent_memory = get_agent_memory()
    try:
        image = agent_memory.get_image(image_id, include_bytes=True)
    except KeyError:
        return gone(request, ObjectKind.IMAGE, image_id)
    viewed(request, image)
    size = stored_image_size(image.bytes)  # None: the stored bytes are no image (the page says so)
    return render_page(
        request,
        "images/detail.html",
        {
            "image": image,
            "size": size,
            "llm": agent_memory.llm is not None,
            "history": CurationEntry.objects.filter(object_kind=ObjectKind.IMAGE, object_id=image_id),
        },
    )


@viewer_required
@cache_control(private=True, max_age=300)
def image_raw(request: HttpRequest, image_id: str) -> HttpResponse:
    """The stored bytes with the stored content type. `nosniff` and a sandboxing CSP keep a
    browser from treating them as anything but an image."""
    try:
        image = get_agent_memory().get_image(image_id, include_bytes=True)
    except KeyError:
        return HttpResponse(status=404)
    response = HttpResponse(image.bytes, content_type=image.mime_type.value.lower())
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Content-Disposition"] = "inline"
    return response


@curator_required
@require_http_methods(["GET", "POST"])
def image_edit(request: HttpRequest, image_id: str) -> HttpResponse:
    agent_memory = get_agent_memory()
    try:
        image = agent_memory.get_image(image_id)
    except KeyError:
        return gone(request, ObjectKind.IMAGE, image_id)
    form = ImageForm(
        request.POST or None,
        initial={"description": image.content, "metadata": image.metadata, "version": image.version},
    )
    context = {"image": image, "form": form}
    if request.method == "POST":
        refused, result = submit(
            request,
            form,
            lambda data: curation(request).update_image(image_id, **data),
            template="images/edit.html",
            context=context,
            current=lambda: agent_memory.get_image(image_id),
            name="image",
            gone_as=(ObjectKind.IMAGE, image_id),
        )
        if refused:
            return refused
        saved(request, result, "the image")
        return redirect("memory:image_detail", image_id)
    return render_page(request, "images/edit.html", context)


@curator_required
@require_POST
def image_describe(request: HttpRequest, image_id: str) -> HttpResponse:
    """Ask the configured LLM for a new description."""
    try:
        curation(request).describe_image_again(image_id)
    except KeyError:
        return gone(request, ObjectKind.IMAGE, image_id)
    except CurationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Asked the LLM for a new description.")
    return redirect("memory:image_detail", image_id)


@curator_required
@require_http_methods(["GET", "POST"])
def image_delete(request: HttpRequest, image_id: str) -> HttpResponse:
    agent_memory = get_agent_memory()
    try:
        image = agent_memory.get_image(image_id)
    except KeyError:
        return gone(request, ObjectKind.IMAGE, image_id)
    cancel_url = reverse("memory:image_detail", args=[image_id])
    confirmed = Confirmed()
    if request.method == "POST":
        try:
            confirmed = confirm_delete(
                request, lambda version: curation(request).delete_image(image_id, version=version)
            )
        except CurationError as error:
            messages.error(request, str(error))
            return redirect(cancel_url)
        if confirmed.status == 200:
            messages.success(request, "Deleted the image. It can be restored from the history.")
            if image.thread_id:
                return redirect("memory:thread_detail", image.thread_id)
            return redirect("memory:overview")
        try:  # refused: confirm again what it is now
            image = agent_memory.get_image(image_id)
        except KeyError:
            return gone(request, ObjectKind.IMAGE, image_id)
    context = {"image": image, "cancel_url": cancel_url, "version": image.version, "refusal": confirmed.refusal}
    return render_page(request, "images/delete.html", context, status=confirmed.status)
