"""Export and import in the dashboard (/settings/transfer/): download the store or a scope as an
oam-export file, upload one to import it in the background, and watch the import's progress.

Curators only, downloads included: an export holds everything in its scope (every message, image
and memory, with metadata), more than a viewer should carry away in one click; viewers read the
store page by page. The export is read by memory.queries.export; the import itself runs in
memory.curation.import_jobs.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory.curation import import_jobs
from memory.models import ImportJob
from memory.queries.export import export_file_name, export_stream
from memory.services import get_agent_memory
from memory.views.common import render_page
from memory.web.access import curator_required
from memory.web.forms.transfer import ExportForm, ImportForm

RECENT_JOBS = 10


def transfer_page(
    request: HttpRequest, *, export_form: ExportForm | None = None, import_form: ImportForm | None = None, status=200
) -> HttpResponse:
    jobs = [import_jobs.refresh(job) for job in ImportJob.objects.all()[:RECENT_JOBS]]
    return render_page(
        request,
        "transfer/page.html",
        {
            "export_form": export_form or ExportForm(),
            "import_form": import_form or ImportForm(max_bytes=import_jobs.max_bytes()),
            "jobs": jobs,
            "max_bytes": import_jobs.max_bytes(),
        },
        status=status,
    )


@curator_required
@require_http_methods(["GET", "POST"])
def transfer(request: HttpRequest) -> HttpResponse:
    """GET: the export and import forms and the latest imports; POST: upload a file and start
    importing it (its header is checked first: another format or version is a form error)."""
    if request.method == "GET":
        return transfer_page(request)
    form = ImportForm(request.POST, request.FILES, max_bytes=import_jobs.max_bytes())
    if not form.is_valid():
        return transfer_page(request, import_form=form, status=400)
    job = import_jobs.start_import(request.user, form.cleaned_data["file"])
    # No flash message: the job's page says "Importing…" itself, only while it runs (a flash would
    # stay above the result once it is done or failed, since polling replaces only the panel).
    return redirect("memory:import_job", job_id=job.pk)


@curator_required
@require_GET
def transfer_export(request: HttpRequest) -> HttpResponse:
    """The export file of the scope asked (the whole store without one), streamed as a download;
    the same bytes as `manage.py oam_export` with the same option."""
    form = ExportForm(request.GET)
    if not form.is_valid():
        return transfer_page(request, export_form=form, status=400)
    scope = form.scope()
    try:
        counts, stream = export_stream(get_agent_memory(), scope)
    except ValueError as error:
        form.add_error(None, str(error))
        return transfer_page(request, export_form=form, status=400)
    if scope and not any(counts.values()):
        [(name, value)] = scope.items()
        form.add_error(name, f"Nothing in the store belongs to {value!r}: no file to download.")
        return transfer_page(request, export_form=form, status=400)
    response = StreamingHttpResponse(stream, content_type="application/jsonl; charset=utf-8")
    name = export_file_name(scope, timezone.now())
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["X-Export-Counts"] = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    return response


@curator_required
@never_cache
@require_GET
def import_job(request: HttpRequest, job_id: int) -> HttpResponse:
    """An import's progress: the whole page, or (htmx polling every second while it runs) only
    its progress panel."""
    job = import_jobs.refresh(get_object_or_404(ImportJob, pk=job_id))
    return render_page(
        request,
        "transfer/job.html",
        {"job": job, "can_resume": import_jobs.can_resume(job)},
        fragment="progress",
    )


@curator_required
@require_POST
def import_resume(request: HttpRequest, job_id: int) -> HttpResponse:
    """Run a failed or interrupted import again: what is already in the store is skipped."""
    job = get_object_or_404(ImportJob, pk=job_id)
    if not import_jobs.resume(job):
        messages.warning(request, "This import cannot run again: it is running, done, or its file is gone.")
    return redirect("memory:import_job", job_id=job.pk)
