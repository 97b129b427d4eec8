"""Django's side of the dashboard: the curation history.

The memory store belongs to the engine; Django's database keeps what the engine does not know:
who changed what through the dashboard (and later the API), with the full values before and
after, so that every human change can be read, diffed and undone. Entries are written only by
`memory.curation`, the one write path for people.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from memory.engine import Visibility, current_visibility


class ObjectKind(models.TextChoices):
    THREAD = "thread", "thread"
    MESSAGE = "message", "message"
    MEMORY = "memory", "memory"
    IMAGE = "image", "image"
    LINK = "link", "link"
    USER = "user", "user"
    AGENT = "agent", "agent"


class Action(models.TextChoices):
    CREATE = "create", "created"
    UPDATE = "update", "updated"
    DELETE = "delete", "deleted"
    LINK = "link", "linked"
    UNLINK = "unlink", "unlinked"
    RESTORE = "restore", "restored"


def joining(record_id: str) -> models.Q:
    """Link entries of a link that joins `record_id`. A link's ends are in its entry's JSON: the
    relation itself, or a snapshot's one relation for a delete and its restore."""
    joined = models.Q()
    for side in ("before", "after"):
        for end in ("source_record_id", "target_record_id"):
            joined |= models.Q(
                **{f"{side}__{end}": record_id, f"{side}__relations__0__{end}": record_id}, _connector=models.Q.OR
            )
    return models.Q(joined, object_kind=ObjectKind.LINK)


OWNER_KINDS = {"user_id": ObjectKind.USER, "agent_id": ObjectKind.AGENT}
"""The scope columns of a record's JSON that name an owner, and the owner's kind."""
PROFILE_OWNERS = {"user_profile": ObjectKind.USER, "agent_profile": ObjectKind.AGENT}
NOT_MEMORIES = {"thread", "message", "image", *PROFILE_OWNERS}
"""Record types of the JSON that are no memory (links join memories only)."""

Owner = tuple[str, str]
"""(ObjectKind.USER or ObjectKind.AGENT, the owner's id)."""


@dataclass(frozen=True)
class NamedOwners:
    """What an entry's JSON says about whose records it changed: the owners it names (`owners`),
    the owners of each memory it holds (`memories`, by id), and the memories at the ends of its
    links (`ends`), whose owners a link's JSON does not name (it names its memories by id)."""

    owners: frozenset[Owner]
    memories: dict[str, frozenset[Owner]]
    ends: frozenset[str]


def named_owners(object_kind: str, object_id: str, before: Any, after: Any) -> NamedOwners:
    """The owners an entry's change touched, as far as its JSON (`before` and `after`: a record, a
    thread, a link, or a snapshot of what a delete took) names them: a user's or agent's own
    entry names them; a record or thread its `user_id` and `agent_id` (both versions: an update
    may move a memory to another user); a snapshot every record and thread in it."""
    owners: set[Owner] = set()
    if object_kind in (ObjectKind.USER, ObjectKind.AGENT):
        owners.add((object_kind, object_id))
    memories: dict[str, frozenset[Owner]] = {}
    ends: set[str] = set()
    for value in (before, after):
        if not isinstance(value, dict):
            continue
        if "records" in value and "relations" in value:  # a snapshot
            items, links = [*(value.get("threads") or []), *(value.get("records") or [])], value.get("relations") or []
        elif "source_record_id" in value:  # a link
            items, links = [], [value]
        else:  # a record or a thread
            items, links = [value], []
        for item in items:
            if not isinstance(item, dict):
                continue
            record_type = item.get("record_type")
            if record_type in PROFILE_OWNERS:
                mine = {(PROFILE_OWNERS[record_type], str(item.get("id")))}
            else:
                mine = {(kind, str(item[column])) for column, kind in OWNER_KINDS.items() if item.get(column)}
            owners |= mine
            if record_type not in NOT_MEMORIES and isinstance(item.get("id"), str):
                memories[item["id"]] = memories.get(item["id"], frozenset()) | mine
        for link in links:
            if isinstance(link, dict):
                ends |= {
                    link[end] for end in ("source_record_id", "target_record_id") if isinstance(link.get(end), str)
                }
    return NamedOwners(frozenset(owners), memories, frozenset(ends))


def owners_of_entries(
    named: list[NamedOwners], memory_owners: Callable[[set[str]], dict[str, frozenset[Owner]]]
) -> list[set[Owner]]:
    """Each entry's owners (`named`, in order): those its JSON names, and the owners of the
    memories its links join, taken from the entries' own JSON first and then from
    `memory_owners(ids)` for the rest (the store, as the change is recorded); a memory neither
    knows is left out."""
    known: dict[str, frozenset[Owner]] = {}
    for entry in named:
        for memory_id, owners in entry.memories.items():
            known[memory_id] = known.get(memory_id, frozenset()) | owners
    missing = {end for entry in named for end in entry.ends if end not in known}
    if missing:
        known |= memory_owners(missing)
    return [set(entry.owners).union(*(known.get(end, ()) for end in entry.ends)) for entry in named]


class CurationEntryQuerySet(models.QuerySet):
    def of_owner(self, kind: str, owner_id: str) -> CurationEntryQuerySet:
        """The changes to anything a user (`kind` "user") or agent owns or owned: their profile,
        threads, messages, memories and images, and the links that join their memories (one
        indexed query through `HistoryOwner`, not a read of every entry's JSON)."""
        return self.filter(id__in=HistoryOwner.objects.filter(kind=kind, owner_id=owner_id).values("entry_id"))

    def of_memory(self, memory_id: str) -> CurationEntryQuerySet:
        """The changes of a memory and of the links that join it (a link made or deleted changes
        whether the memory is valid, so its page lists it too)."""
        return self.filter(models.Q(object_kind=ObjectKind.MEMORY, object_id=memory_id) | joining(memory_id))

    def of_record(self, record_id: str) -> CurationEntryQuerySet:
        """The changes of the object with this id, whatever its kind, and of the links that join
        it (for a memory, as `of_memory`)."""
        return self.filter(models.Q(object_id=record_id) | joining(record_id))


class Authored(models.Model):
    """When a change was made, by whom, and through what (the dashboard, or the API with a token)."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    actor_name = models.CharField(max_length=150, help_text="The username at the time, kept if the user goes.")
    via = models.CharField(max_length=20, default="dashboard")
    token_name = models.CharField(
        max_length=100, blank=True, help_text="The API token's name, for a change made with one."
    )

    class Meta:
        abstract = True


class ScopedBulkChanges(models.Manager):
    """Bulk changes as the current caller may see them: for a scoped login, those with an entry
    it sees and none it does not (`visible_entries`); all of them otherwise."""

    def get_queryset(self) -> models.QuerySet:
        changes = super().get_queryset()
        if current_visibility() is None:
            return changes
        every = CurationEntry.with_pending.filter(pending="")
        seen = visible_entries(every)
        return changes.filter(id__in=seen.values("bulk_id")).exclude(
            id__in=every.exclude(id__in=seen.values("id")).values("bulk_id")
        )


class BulkChange(Authored):
    """A change of many records made at once (a bulk action, a merge of duplicates, a purge): its
    entries are the `CurationEntry` rows that point here. The history lists it as one change, and
    it is undone in one step (`Curation.revert_bulk`); `reverts` points at the change an undo undid.
    """

    summary = models.CharField(max_length=300)
    reverts = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reverted_by")

    objects = ScopedBulkChanges()

    class Meta(Authored.Meta):
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"{self.actor_name}: {self.summary}"


class ConfirmedEntries(models.Manager):
    """The history as it stands: entries whose change the store is known to hold. An entry is
    written pending before its change commits in the store (memory.curation) and confirmed after;
    one left pending by a crash is settled by `memory.curation.reconcile_pending`."""

    def get_queryset(self) -> models.QuerySet:
        return visible_entries(super().get_queryset().filter(pending=""))


def visible_entries(entries: models.QuerySet) -> models.QuerySet:
    """The entries the current caller may see (memory.engine.current_visibility: a scoped login's
    request, memory.web.scopes): those whose every owner (HistoryOwner) is inside its scope, with
    at least one on each dimension it restricts; all of them when it is unrestricted. The
    history's counterpart of the engine's restricted view, so that every page, list and revert
    that reads `CurationEntry.objects` is filtered without a check of its own."""
    visibility = current_visibility()
    if visibility is None:
        return entries
    for kind, ids in ((ObjectKind.USER, visibility.users), (ObjectKind.AGENT, visibility.agents)):
        if ids is None:
            continue
        owners = HistoryOwner.objects.filter(kind=kind)
        entries = entries.filter(id__in=owners.filter(owner_id__in=sorted(ids)).values("entry_id")).exclude(
            id__in=owners.exclude(owner_id__in=sorted(ids)).values("entry_id")
        )
    return entries


class CurationEntry(Authored):
    """One change a person made to one object of the memory store.

    `before` and `after` hold the object as JSON (memory.engine.snapshot's record form) before
    and after the change; a delete keeps in `before` the whole snapshot of what went with it, so
    that it can be restored with its original ids and links. `reverts` points at the entry a
    revert or restore undid.
    """

    object_kind = models.CharField(max_length=20, choices=ObjectKind.choices)
    object_id = models.CharField(max_length=600)
    thread_id = models.CharField(max_length=600, blank=True, help_text="The thread the object belongs to, if any.")
    action = models.CharField(max_length=20, choices=Action.choices)
    summary = models.CharField(max_length=300)
    before = models.JSONField(null=True)
    after = models.JSONField(null=True)
    reverts = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reverted_by")
    bulk = models.ForeignKey(
        BulkChange,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="entries",
        help_text="The bulk change this entry is one record of, if any.",
    )

    pending = models.CharField(
        max_length=32,
        blank=True,
        default="",
        db_index=True,
        help_text="Its change's token until the store is known to hold it (memory.curation); then empty.",
    )

    change_token = models.CharField(
        max_length=32,
        blank=True,
        default="",
        db_index=True,
        help_text="The change it was recorded in, which the activity log's events of its writes name.",
    )

    erased = models.BooleanField(
        default=False,
        help_text="A tombstone: its content was erased with a person; it cannot be reverted.",
    )

    objects = ConfirmedEntries.from_queryset(CurationEntryQuerySet)()
    """Confirmed entries only: every page, list and revert reads these."""
    with_pending = CurationEntryQuerySet.as_manager()
    """Every entry, pending ones too: for the curation module's recording and reconciling."""

    class Meta(Authored.Meta):
        ordering = ("-at", "-id")
        base_manager_name = "with_pending"
        indexes = (
            models.Index(fields=["object_kind", "object_id", "-at"], name="history_object"),
            models.Index(fields=["thread_id", "-at"], name="history_thread"),
            models.Index(fields=["actor_name", "-at"], name="history_actor"),
        )
        verbose_name_plural = "curation entries"

    def __str__(self) -> str:
        return f"{self.actor_name} {self.get_action_display()} {self.object_kind} {self.object_id}"


class HistoryOwner(models.Model):
    """A user or agent whose records an entry's change touched (`named_owners`): the owner of its
    object, of every record a deletion took with it, and of the memories at a link's ends, so
    that a user's or agent's page lists the changes to everything they own by one indexed query.
    Written with the entry (memory.curation.recording); a link whose memories were gone when
    the history was first given owners (migration 0009) may have none."""

    entry = models.ForeignKey(CurationEntry, on_delete=models.CASCADE, related_name="owners")
    kind = models.CharField(max_length=20, choices=[(ObjectKind.USER, "user"), (ObjectKind.AGENT, "agent")])
    owner_id = models.CharField(max_length=600)

    class Meta:
        indexes = (models.Index(fields=["kind", "owner_id", "entry"], name="history_owner"),)
        constraints = (models.UniqueConstraint(fields=["entry", "kind", "owner_id"], name="history_owner_once"),)

    def __str__(self) -> str:
        return f"{self.kind} {self.owner_id} (entry {self.entry_id})"


class TokenRole(models.TextChoices):
    VIEWER = "viewer", "viewer (reads)"
    CURATOR = "curator", "curator (reads and writes)"


class ApiTokenQuerySet(models.QuerySet):
    def usable(self) -> ApiTokenQuerySet:
        """Tokens that authenticate: not revoked, not expired."""
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=timezone.now())
        )


class ApiToken(models.Model):
    """A personal API token: sent as `Authorization: Bearer <token>`, acting as its owner with a
    role no higher than the owner's.

    Only the token's SHA-256 is stored (a token is 32 random bytes: a slow password hash would add
    nothing but latency to every request); the token itself is shown once, when it is created.
    `prefix` (its first characters) tells tokens apart in lists and logs without revealing them.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    role = models.CharField(max_length=10, choices=TokenRole.choices)
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = (
            models.UniqueConstraint(
                fields=["user", "name"], condition=models.Q(revoked_at__isnull=True), name="token_name_per_user"
            ),
        )

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user}"

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()


class ReviewKind(models.TextChoices):
    ACCEPTED = "accepted", "accepted an automatic link's retirement"
    DISMISSED = "dismissed", "dismissed a contradiction"


class ReviewMark(Authored):
    """A review queue's decision that changes nothing in the store, kept with who made it and when.

    `accepted`: a memory an LLM-made lifecycle link retired was looked at and the link kept, so
    the "retired by automatic links since the last review" queue no longer lists it. `dismissed`:
    a `contradicts` pair was looked at and left as it is (both memories stay valid), so the
    unresolved contradictions queue no longer lists it. Marks are per link (`relation_id`); the
    link's ends and type are kept as they were, to say what was decided even after the link goes.
    """

    kind = models.CharField(max_length=20, choices=ReviewKind.choices)
    relation_id = models.CharField(max_length=600)
    relation_type = models.CharField(max_length=200)
    source_record_id = models.CharField(max_length=600)
    target_record_id = models.CharField(max_length=600)

    class Meta(Authored.Meta):
        ordering = ("-at", "-id")
        constraints = (models.UniqueConstraint(fields=["kind", "relation_id"], name="review_mark_per_link"),)

    def __str__(self) -> str:
        return f"{self.actor_name} {self.get_kind_display()} ({self.relation_id})"


class ScopedJobs(models.Manager):
    """Import jobs as the current caller may see them: a scoped login's requests (and its jobs'
    threads) see the jobs of logins with the very same scope, whose files hold only what that
    scope may import; everyone else sees them all."""

    def get_queryset(self) -> models.QuerySet:
        jobs = super().get_queryset()
        visibility = current_visibility()
        if visibility is None:
            return jobs
        # The logins of that scope, compared here rather than as JSON in SQL (Oracle compares no arrays).
        logins = [scope.login_id for scope in AccessScope.objects.all() if scope.visibility() == visibility]
        return jobs.filter(actor_id__in=logins)


class UnscopedOnly(models.Manager):
    """Rows about the whole store (the consistency check's runs): none for a scoped login."""

    def get_queryset(self) -> models.QuerySet:
        rows = super().get_queryset()
        return rows if current_visibility() is None else rows.none()


class ImportStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    CHECKING = "checking", "checking the file"
    RUNNING = "running", "importing"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    INTERRUPTED = "interrupted", "interrupted"


class ImportJob(Authored):
    """An oam-export file uploaded in the dashboard and imported into the store in the background
    (memory.curation.import_jobs): who uploaded it and when (`at`), the file, and how far the import got.

    The import runs in a thread of the web server process that received the upload (`pid`); a job
    left `checking` or `running` by a process that is gone is shown `interrupted`, and running it
    again resumes (the import skips every id already in the store). `done` and `total` count the
    file's lines after its header; `skipped` is the import's summary of what it left out and why
    (a list of {"kind", "reason", "count"})."""

    file_name = models.CharField(max_length=255, help_text="The name of the uploaded file, as sent.")
    path = models.CharField(max_length=1000, help_text="Where the upload is kept while (and after) it is imported.")
    size = models.BigIntegerField(help_text="The file's size in bytes.")
    status = models.CharField(max_length=20, choices=ImportStatus.choices, default=ImportStatus.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    restored = models.JSONField(default=dict, help_text="Imported threads, records and relations.")
    skipped = models.JSONField(default=list)
    error = models.TextField(blank=True)
    pid = models.IntegerField(null=True, blank=True, help_text="The server process running the import.")
    change = models.ForeignKey(
        BulkChange,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The bulk change of the curation history that records what the import created.",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ScopedJobs()

    class Meta(Authored.Meta):
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"import of {self.file_name} by {self.actor_name} ({self.status})"

    @property
    def active(self) -> bool:
        """Queued, checking or importing: its page keeps polling."""
        return self.status in (ImportStatus.QUEUED, ImportStatus.CHECKING, ImportStatus.RUNNING)

    @property
    def percent(self) -> int:
        """How much of the file is read, 0-100 (a done job of an empty file is at 100)."""
        if not self.total:
            return 100 if self.status == ImportStatus.DONE else 0
        return min(100, self.done * 100 // self.total)

    @property
    def imported_count(self) -> int:
        """Threads, records and links the import wrote (each a line of the file)."""
        return sum(self.restored.values()) if isinstance(self.restored, dict) else 0

    @property
    def skipped_count(self) -> int:
        return sum(item.get("count", 0) for item in self.skipped)


class CheckRun(Authored):
    """One run of the consistency check (memory.curation.consistency.run_check), from `manage.py oam_check`
    or the overview's buttons: when, by whom or what, whether it repaired, and its findings as
    JSON (each finding's name, description, found, remaining, examples, repairable). The overview
    shows the latest."""

    repaired = models.BooleanField(default=False, help_text="Run with repair: the findings are what remained.")
    ok = models.BooleanField()
    findings = models.JSONField(default=list)
    seconds = models.FloatField(default=0)

    objects = UnscopedOnly()

    class Meta(Authored.Meta):
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"check by {self.actor_name} at {self.at:%Y-%m-%d %H:%M}: {'ok' if self.ok else 'problems'}"

    @property
    def problems(self) -> list[dict]:
        """The findings with something found (repaired or not)."""
        return [finding for finding in self.findings if finding.get("found") or finding.get("remaining")]


class SavedView(models.Model):
    """A listing's filters a person saved under a name (the memory or thread list's query string),
    to open again from that list: each person's own, as Langfuse's and Datasette's saved views."""

    class Listing(models.TextChoices):
        MEMORIES = "memories"
        THREADS = "threads"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views")
    listing = models.CharField(max_length=20, choices=Listing.choices)
    name = models.CharField(max_length=80)
    query = models.CharField(max_length=4000, help_text="The listing's query string, without paging.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name", "id")
        constraints = (models.UniqueConstraint(fields=("user", "listing", "name"), name="saved_view_name_per_listing"),)

    def __str__(self) -> str:
        return f"{self.user} · {self.listing}: {self.name}"


class ErasureStatus(models.TextChoices):
    STARTED = "started", "started"
    DONE = "done", "done"


class ErasureReceipt(Authored):
    """The receipt of a person's erasure (memory.curation.erasure), without any of their content:
    who erased whom (`user_id`, kept in clear: the receipt answers "was this person erased, when,
    by whom" for the person and an auditor, and an id is what the deployment already knows them
    by; docs/governance.md), the counts per kind, what it could not reach, and a SHA-256 digest
    over the user id, the counts and the sorted ids of everything that went.

    Written `started` before anything is removed, with the counts of the preview: a crash leaves
    it so, and the next erasure of the same id finishes the job (the store's part is one
    transaction; the history, the import files and the files' scrubbing are done again)."""

    user_id = models.CharField(max_length=600, db_index=True)
    status = models.CharField(max_length=20, choices=ErasureStatus.choices, default=ErasureStatus.STARTED)
    counts = models.JSONField(default=dict, help_text="What went, per kind (store, activity log, history, imports).")
    digest = models.CharField(max_length=64, blank=True, help_text="SHA-256 over the user id, counts and erased ids.")
    unreached = models.JSONField(
        default=list, help_text="What the erasure could not reach: exports already downloaded (when, by whom)."
    )
    imports = models.JSONField(
        default=list, help_text="Kept import uploads that held their records, and what was done."
    )
    files = models.JSONField(default=dict, help_text="What was done to the files: the store's and Django's database.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta(Authored.Meta):
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"erasure of user {self.user_id} by {self.actor_name} ({self.status})"

    @property
    def total(self) -> int:
        return sum(value for value in self.counts.values() if isinstance(value, int))

    def as_json(self) -> dict[str, Any]:
        """The receipt as it is downloaded (and the API answers): counts, who, when, the digest,
        and what was not reached; no content."""
        return {
            "receipt": self.pk,
            "user_id": self.user_id,
            "status": self.status,
            "erased_by": self.actor_name,
            "via": self.via,
            "token_name": self.token_name,
            "started_at": self.at.isoformat() if self.at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "counts": self.counts,
            "digest_sha256": self.digest,
            "not_reached": {"downloaded_exports": self.unreached},
            "import_uploads": self.imports,
            "files": self.files,
        }


class AccessScope(models.Model):
    """What a login (and every API token it owns) may see of the store: the users and agents it
    is limited to (memory.web.scopes). No row: everything. An empty list leaves that dimension
    open; a login limited to users sees no record without a user."""

    login = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_scope")
    users = models.JSONField(default=list, blank=True, help_text="The user ids it sees (empty: every user).")
    agents = models.JSONField(default=list, blank=True, help_text="The agent ids it sees (empty: every agent).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("login__username",)

    def __str__(self) -> str:
        return f"{self.login}: {self.visibility().describe()}"

    def visibility(self) -> Visibility:
        return Visibility(users=self.users or None, agents=self.agents or None)


class SensitiveDismissal(Authored):
    """A value the engine found in a record (a secret or a piece of personal data) that a curator
    judged not sensitive: the `sensitive` review queue leaves out every finding of this record
    with this value, whatever rescans find. Kept by the value's digest, never the value; `kind`
    and the masked `preview` say what was judged."""

    record_id = models.CharField(max_length=600)
    digest = models.CharField(max_length=64, help_text="SHA-256 of the value (memory.engine.sensitive).")
    kind = models.CharField(max_length=40)
    preview = models.CharField(max_length=1000, help_text="The value masked, as the queue showed it.")

    class Meta(Authored.Meta):
        ordering = ("-at", "-id")
        constraints = (models.UniqueConstraint(fields=["record_id", "digest"], name="sensitive_dismissal_per_value"),)

    def __str__(self) -> str:
        return f"{self.actor_name} judged {self.preview} not sensitive ({self.record_id})"
