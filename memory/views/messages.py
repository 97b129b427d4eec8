"""A thread's messages: their page, their edit form (a page, and inline on the thread page with
htmx), their delete confirmation, and adding an image to a thread."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from memory.models import CurationEntry, ObjectKind
from memory.services import get_agent_memory
from memory.views.common import Confirmed, confirm_delete, curation, gone, render_page, saved, submit
from memory.web.access import curator_required, viewer_required
from memory.web.audit import viewed
from memory.web.engine_errors import field_errors
from memory.web.forms.records import ImageUploadForm, MessageForm

EXTRACTED_SHOWN = 50


def thread_url(thread_id: str) -> str:
    return reverse("memory:thread_detail", args=[thread_id])


@viewer_required
@vary_on_headers("HX-Request")
def message_detail(request: HttpRequest, thread_id: str, message_id: str) -> HttpResponse:
    """A message with its parts, the memories extracted from it (their provenance names it) and
    its history. For htmx, just its timeline item (what "cancel" on
    an inline edit puts back)."""
    agent_memory = get_agent_memory()
    try:
        message = agent_memory.get_message_record(thread_id, message_id)
    except KeyError:
        return gone(request, ObjectKind.MESSAGE, message_id, thread_id=thread_id)
    context = {"message": message, "thread_id": thread_id, **images_of(message)}
    if request.htmx and not request.htmx.boosted:
        return render_page(request, "messages/item.html", context)
    viewed(request, message)
    context["history"] = CurationEntry.objects.filter(object_kind=ObjectKind.MESSAGE, object_id=message_id)
    context["extracted"] = agent_memory.memories_from_message(thread_id, message_id, limit=EXTRACTED_SHOWN)
    return render_page(request, "messages/detail.html", context)


def image_ids(message) -> list[str]:
    return [part["id"] for part in message.parts or () if part.get("type") == "image"]


def images_of(message) -> dict[str, dict]:
    """The image records of a message's image parts, for their thumbnails (by id)."""
    ids = image_ids(message)
    return {"images": {image.id: image for image in get_agent_memory().list_images(image_id=ids)} if ids else {}}


@curator_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def message_edit(request: HttpRequest, thread_id: str, message_id: str) -> HttpResponse:
    """Edit content, role, metadata and timestamp. The engine re-embeds the new text; the thread
    page's inline editor posts here too and gets the updated timeline item back."""
    agent_memory = get_agent_memory()
    try:
        message = agent_memory.get_message_record(thread_id, message_id)
    except KeyError:
        return gone(request, ObjectKind.MESSAGE, message_id, thread_id=thread_id)
    initial = {
        "content": message.content,
        "role": message.role,
        "metadata": message.metadata,
        "timestamp": message.timestamp,
        "version": message.version,
    }
    form = MessageForm(request.POST or None, initial=initial, stored_role=message.role)
    inline = bool(request.htmx) and not request.htmx.boosted
    context = {"message": message, "form": form, "thread_id": thread_id, "inline": inline}
    fragment = "form" if inline else None
    if request.method == "POST":
        refused, result = submit(
            request,
            form,
            lambda data: curation(request).update_message(thread_id, message_id, **data),
            template="messages/edit.html",
            context=context,
            current=lambda: agent_memory.get_message_record(thread_id, message_id),
            name="message",
            gone_as=(ObjectKind.MESSAGE, message_id),
            fragment=fragment,
        )
        if refused:
            return refused
        if inline:  # the edited message back in its place on the timeline
            message = agent_memory.get_message_record(thread_id, message_id)
            return render_page(request, "messages/item.html", {**context, "message": message, **images_of(message)})
        saved(request, result, "the message")
        return redirect(f"{thread_url(thread_id)}#message-{message.seq_no}")
    return render_page(request, "messages/edit.html", context, fragment=fragment)


@curator_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def message_delete(request: HttpRequest, thread_id: str, message_id: str) -> HttpResponse:
    """GET: what goes with the message (its images; memories extracted from it stay); POST: delete.
    On the thread page (htmx) the confirmation takes the message's place, and then a notice does."""
    agent_memory = get_agent_memory()
    try:
        message = agent_memory.get_message_record(thread_id, message_id)
    except KeyError:
        return gone(request, ObjectKind.MESSAGE, message_id, thread_id=thread_id)
    inline = bool(request.htmx) and not request.htmx.boosted
    confirmed = Confirmed()
    if request.method == "POST":
        confirmed = confirm_delete(
            request, lambda version: curation(request).delete_message(thread_id, message_id, version=version)
        )
        if confirmed.status == 200:
            if inline:
                history_url = reverse("memory:history_entry", args=[confirmed.result.pk])
                return render_page(request, "messages/deleted.html", {"message": message, "history_url": history_url})
            messages.success(request, "Deleted the message. It can be restored from the history.")
            return redirect(thread_url(thread_id))
        try:  # refused: confirm again what it is now
            message = agent_memory.get_message_record(thread_id, message_id)
        except KeyError:
            return gone(request, ObjectKind.MESSAGE, message_id, thread_id=thread_id)
    context = {
        "message": message,
        "thread_id": thread_id,
        "image_count": len(image_ids(message)),
        "cancel_url": thread_url(thread_id),
        "inline": inline,
        "version": message.version,
        "refusal": confirmed.refusal,
    }
    return render_page(
        request, "messages/delete.html", context, fragment="confirm" if inline else None, status=confirmed.status
    )


@curator_required
@require_http_methods(["GET", "POST"])
def image_add(request: HttpRequest, thread_id: str) -> HttpResponse:
    """Upload an image into a thread, as a message with an image part or as an image record. The
    engine checks it (format, size, pixels) before anything is stored."""
    agent_memory = get_agent_memory()
    try:
        thread = agent_memory.get_thread_record(thread_id)
    except KeyError:
        return gone(request, ObjectKind.THREAD, thread_id)
    form = ImageUploadForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                curation(request).add_image(
                    thread_id,
                    data["image"].read(),
                    description=data["description"],
                    add_as=data["add_as"],
                    role=data["role"],
                    text=data["text"],
                )
            except ValueError as error:
                field, message = field_errors(error, form.fields)
                form.add_error(field if field in form.fields else "image", message)
            else:
                messages.success(request, "Added the image.")
                return redirect(thread_url(thread_id))
        status = 400
    return render_page(request, "images/add.html", {"thread": thread, "form": form}, status=status)
