"""Many processes over one store: gunicorn with two workers (gthread, two threads each) over one
SQLite store, as a deployment runs `gunicorn oam_site.wsgi`, with real processes and HTTP over
loopback.

The site is set up as its administrator would (manage.py migrate, oam_user, oam_token) in a
temporary folder (bench/_gunicorn.py). gunicorn's access log names the pid of the worker that
answered each request, found by the request's X-Probe header, so the test knows which process
served what without the product sending its pid anywhere.

1. Each write (a memory created, edited, linked, unlinked, deleted) through one worker is seen by
   every later request, whichever worker answers: reads go out four at a time until each worker
   has answered several, and every one must show the write. Search answers from each worker's
   in-memory index, which must catch up from the store's change log; record, listing, link and
   dashboard pages read the database.
2. A bounded concurrent load (client threads mixing API writes and reads with the dashboard's bulk
   changes, LOAD_SECONDS) answers no 5xx, the server logs no error ("database is locked"
   included), and oam_check finds the store consistent.
3. Both workers opening a store that does not exist yet, at once, answer every first request.
4. Conditional writes from clients at the same moment (issue 25): eight clients that read one
   memory's ETag and send the same PATCH with it as If-Match get exactly one 200 and seven 412s,
   round after round; a read-increment-write counter under If-Match loses no acknowledged write.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import pytest

from bench._gunicorn import Site, password_of

WORKERS = 2
THREADS = 2
READS_PER_WORKER = 3
"""After a write, every worker must answer at least this many reads (all of which see it)."""
MAX_READ_BATCHES = 60
LOAD_SECONDS = 8.0
LOAD_CLIENTS = 4
API = "/api/v1"
CLAIMERS = 8
CLAIM_ROUNDS = 12
COUNTER_SECONDS = 3.0

_probes = itertools.count()


@dataclass
class Served:
    probe: str
    what: str
    response: httpx.Response


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[tuple[Site, str, httpx.Client]]:
    site = Site(tmp_path_factory.mktemp("many-processes"))
    token = site.make_curator()
    try:
        site.serve(workers=WORKERS, threads=THREADS, access_log=True)
        dashboard = site.session("carl", password_of("carl"))
        yield site, token, dashboard
        dashboard.close()
    finally:
        site.stop()


def call(site: Site, token: str, method: str, path: str, client: httpx.Client | None = None, **options) -> Served:
    """One request on a connection of its own (so any worker may take it), named by its X-Probe header."""
    probe = f"probe-{next(_probes)}"
    headers = {"X-Probe": probe, "Connection": "close"}
    if client is None:
        headers["Authorization"] = f"Bearer {token}"
        response = httpx.request(method, site.base + path, headers=headers, timeout=60, **options)
    else:
        response = client.request(method, path, headers=headers, **options)
    return Served(probe, f"{method} {path}", response)


def pids_of(site: Site, probes: list[str]) -> dict[str, int]:
    """The pid of the worker that answered each probe, from gunicorn's access log (written just
    after the answer, so it is waited for)."""
    deadline = time.monotonic() + 30
    while True:
        found = {}
        for line in site.access_log.read_text().splitlines():
            pid, probe, *_ = line.split(" ", 2)
            found[probe] = int(pid.strip("<>"))
        if all(probe in found for probe in probes) or time.monotonic() > deadline:
            return {probe: found[probe] for probe in probes if probe in found}
        time.sleep(0.05)


Check = Callable[[], list[tuple[Served, bool]]]


def reads_see_it(site: Site, writer: Served, reads: list[Callable[[], tuple[Served, bool]]]) -> None:
    """Run `reads` four at a time until every worker has answered READS_PER_WORKER of them; each
    must see the write (its check is True), and some must come from another worker than the writer."""
    writer_pid = pids_of(site, [writer.probe])[writer.probe]
    answered: Counter[int] = Counter()
    with ThreadPoolExecutor(4) as pool:
        for batch in range(MAX_READ_BATCHES):
            done = list(pool.map(lambda read: read(), [reads[(batch * 4 + n) % len(reads)] for n in range(4)]))
            pids = pids_of(site, [served.probe for served, _ in done])
            for served, sees_it in done:
                pid = pids[served.probe]
                assert sees_it, (
                    f"{served.what} answered by worker {pid} (the write, {writer.what}, was by {writer_pid}) "
                    f"does not show the write: {served.response.status_code} {served.response.text[:300]}"
                )
                answered[pid] += 1
            if len(answered) == WORKERS and min(answered.values()) >= READS_PER_WORKER:
                break
    assert len(answered) == WORKERS, f"only workers {sorted(answered)} answered the reads after {writer.what}"
    assert set(answered) - {writer_pid}, f"no worker other than the writer {writer_pid} answered after {writer.what}"


DECOYS = [
    "Erin moved to Porto in May.",
    "Dana keeps her bicycle in the hall.",
    "Dana likes rainy walks by the river.",
    "Farid lost his keys on the tram.",
    "Dana drinks green tea in the morning.",
    "Gus keeps a red scarf by the door.",
    "Dana reads on the bus to work.",
    "Hana moved to Lyon last spring.",
]
"""Other memories of the same user, near the test's in words, so that a search whose index missed
a write ranks one of them first instead."""


def test_a_write_in_one_worker_is_seen_by_the_next_request_in_any_other(site):
    site, token, dashboard = site
    user = "user-visible"

    def api(method: str, path: str, **options) -> Served:
        return call(site, token, method, path, **options)

    def top_result(query: str) -> tuple[Served, dict | None]:
        """The first result of a one-hop search of the user's memories, answered from the
        answering worker's in-memory index (vectors, words, links)."""
        body = {"query": query, "user_id": user, "max_results": 1, "num_hops": 1}
        served = api("POST", f"{API}/search/", json=body)
        results = served.response.json()["results"]
        return served, results[0] if results else None

    def memory_reads(memory_id: str, expected: str | None) -> list[Callable[[], tuple[Served, bool]]]:
        """Record, listing, search and dashboard page: each shows `expected` as the memory's
        content (None: the memory is gone)."""

        def record() -> tuple[Served, bool]:
            served = api("GET", f"{API}/memories/{memory_id}/")
            if expected is None:
                return served, served.response.status_code == 404
            return served, served.response.status_code == 200 and served.response.json()["content"] == expected

        def listing() -> tuple[Served, bool]:
            served = api("GET", f"{API}/memories/?user_id={user}&limit=200")
            contents = {row["id"]: row["content"] for row in served.response.json()["results"]}
            return served, contents.get(memory_id) == expected

        def search() -> tuple[Served, bool]:
            """Its exact words find it first, which only an index that has it (as it is now) can do."""
            served, top = top_result(expected or "violet umbrella")
            if expected is None:
                return served, top is None or top["id"] != memory_id
            return served, top is not None and top["id"] == memory_id and top["record"]["content"] == expected

        def page() -> tuple[Served, bool]:
            served = call(site, token, "GET", f"/memories/{memory_id}/", client=dashboard)
            if expected is None:
                return served, served.response.status_code == 404
            return served, served.response.status_code == 200 and expected in served.response.text

        return [record, listing, search, page]

    def link_reads(source: str, content: str, link_id: str, present: bool) -> list[Callable[[], tuple[Served, bool]]]:
        """The link listing, the link, and a one-hop search from `source` (its `content`) whose
        linked results come from the answering worker's link index."""

        def links() -> tuple[Served, bool]:
            served = api("GET", f"{API}/links/?record_id={source}")
            ids = {row["id"] for row in served.response.json()["results"]}
            return served, (link_id in ids) == present

        def one() -> tuple[Served, bool]:
            served = api("GET", f"{API}/links/{link_id}/")
            return served, served.response.status_code == (200 if present else 404)

        def hop() -> tuple[Served, bool]:
            served, top = top_result(content)
            linked = {child["relation"]["id"] for child in top["linked_results"]} if top else set()
            return served, top is not None and top["id"] == source and (link_id in linked) == present

        return [links, one, hop]

    def written(served: Served, status: int) -> Served:
        assert served.response.status_code == status, served.response.text[:500]
        return served

    for n, content in enumerate(DECOYS):
        last = written(api("POST", f"{API}/memories/", json={"content": content, "user_id": user, "id": f"d{n}"}), 201)
    # Every worker loads its index (records and links) before the writes under test.
    reads_see_it(site, last, memory_reads("umbrella", None))

    first = "Dana keeps a violet umbrella by the door."
    made = written(api("POST", f"{API}/memories/", json={"content": first, "user_id": user, "id": "umbrella"}), 201)
    reads_see_it(site, made, memory_reads("umbrella", first))

    edited = "Dana moved to Lisbon in March with her cello."
    changed = written(api("PATCH", f"{API}/memories/umbrella/", json={"content": edited}), 200)
    reads_see_it(site, changed, memory_reads("umbrella", edited))

    link = {"source_record_id": "umbrella", "target_record_id": "d4", "relation_type": "supports"}
    linked = written(api("POST", f"{API}/links/", json=link), 201)
    link_id = linked.response.json()["id"]
    reads_see_it(site, linked, link_reads("umbrella", edited, link_id, present=True))

    unlinked = written(api("DELETE", f"{API}/links/{link_id}/"), 200)  # with its status changes
    reads_see_it(site, unlinked, link_reads("umbrella", edited, link_id, present=False))

    deleted = written(api("DELETE", f"{API}/memories/umbrella/"), 204)
    reads_see_it(site, deleted, memory_reads("umbrella", None))


def test_a_concurrent_load_answers_no_server_error_and_logs_no_locked_database(site):
    site, token, _ = site
    statuses: Counter[int] = Counter()
    failures: list[str] = []
    guard = threading.Lock()

    def client_loop(number: int, stop: float) -> None:
        user = f"user-load-{number}"
        count = 0
        api = httpx.Client(base_url=site.base + API, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        dashboard = site.session("carl", password_of("carl"))

        def send(method: str, path: str, client: httpx.Client = api, **options) -> httpx.Response:
            """An API call (any 2xx will do), or a dashboard form (it must redirect: a page with
            the form again means it was refused)."""
            response = client.request(method, path, **options)
            with guard:
                statuses[response.status_code] += 1
                if not (response.status_code == 302 if client is dashboard else response.is_success):
                    failures.append(f"{method} {path}: {response.status_code} {response.text[:300]}")
            return response

        try:
            while time.monotonic() < stop:
                count += 1
                first, second = f"{user}-{count}-a", f"{user}-{count}-b"
                for memory_id in (first, second):
                    content = f"{user} note {count} ({memory_id}) about trains and tea"
                    send("POST", "/memories/", json={"content": content, "user_id": user, "id": memory_id})
                send(
                    "PATCH",
                    f"/memories/{first}/",
                    json={"content": f"{user} note {count} edited", "metadata": {"n": count}},
                )
                send("POST", "/search/", json={"query": "trains and tea", "user_id": user})
                send("GET", f"/memories/?user_id={user}&limit=50")
                link = {"source_record_id": second, "target_record_id": first, "relation_type": "supports"}
                send("POST", "/links/", json=link)
                send("POST", "/search/", json={"query": "note edited", "user_id": user, "num_hops": 1})
                if count % 2:
                    send("DELETE", f"/memories/{second}/")
                if count % 3 == 0:  # a bulk change in the dashboard: one transaction of each database
                    listed = send("GET", f"/memories/?user_id={user}&limit=200").json()["results"]
                    form = {
                        "action": "set_metadata",
                        "key": "round",
                        "value": str(count),
                        "selection": "\n".join(f"{row['id']} {row['version']}" for row in listed),
                        "csrfmiddlewaretoken": dashboard.cookies["csrftoken"],
                    }
                    send("POST", "/memories/bulk/", client=dashboard, data=form)
        finally:
            api.close()
            dashboard.close()

    stop = time.monotonic() + LOAD_SECONDS
    threads = [threading.Thread(target=client_loop, args=(n, stop)) for n in range(LOAD_CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=LOAD_SECONDS + 300)
    assert not any(thread.is_alive() for thread in threads), "a client never finished"

    log = site.log()
    assert sum(statuses.values()) > 50, f"only {sum(statuses.values())} requests ran"
    assert not [status for status in statuses if status >= 500], f"server errors {statuses}:\n{log[-3000:]}"
    assert not failures, f"{len(failures)} requests failed ({statuses}); first: {failures[:3]}"
    assert "database is locked" not in log, log[-3000:]
    assert not re.search(r"Traceback|\bERROR\b", log), log[-3000:]
    site.manage("oam_check")  # exits non-zero, which raises, while the store has a problem


def all_at_once(site: Site, token: str, work: Callable[[httpx.Client], object]) -> list:
    """`work(client)` for CLAIMERS API clients, each in a thread of its own with a connection it
    keeps (so that requests sent at the same moment reach the workers at the same moment)."""

    def client_work(_: int) -> object:
        with httpx.Client(base_url=site.base + API, headers={"Authorization": f"Bearer {token}"}, timeout=60) as api:
            return work(api)

    with ThreadPoolExecutor(CLAIMERS) as pool:
        return list(pool.map(client_work, range(CLAIMERS), timeout=120))


def test_clients_claiming_a_memory_at_the_same_etag_at_once_get_one_200_and_the_rest_412(site):
    """Each round, eight clients read a new memory's ETag, wait for one another, and all send
    `{"metadata": {"claimed": true}}` with it as If-Match: only one of them may be told it
    claimed the memory, though the others' writes would change nothing once the first is made."""
    site, token, _ = site
    rounds = []
    for round_number in range(CLAIM_ROUNDS):
        path = f"/memories/claim-{round_number}/"
        body = {"content": f"A task to claim, round {round_number}.", "user_id": "user-claims", "id": path[10:-1]}
        assert call(site, token, "POST", f"{API}/memories/", json=body).response.status_code == 201
        read_by_all = threading.Barrier(CLAIMERS, timeout=60)

        def claim(api: httpx.Client, path: str = path, read_by_all: threading.Barrier = read_by_all) -> int:
            etag = api.get(path).headers["ETag"]
            read_by_all.wait()
            return api.patch(path, json={"metadata": {"claimed": True}}, headers={"If-Match": etag}).status_code

        rounds.append(Counter(all_at_once(site, token, claim)))
        stored = call(site, token, "GET", API + path).response
        assert (stored.json()["metadata"], stored.headers["ETag"]) == ({"claimed": True}, '"2"')
    assert rounds == [Counter({200: 1, 412: CLAIMERS - 1})] * CLAIM_ROUNDS, rounds


DELETE_ROUNDS = 6


def test_clients_deleting_a_memory_at_the_same_etag_at_once_get_one_204(site):
    """Each round, eight clients read a new memory's ETag, wait for one another, and all DELETE it
    with that If-Match: exactly one is told it deleted it (204), the others that it is gone (404)
    or changed (412), and the history holds one deletion."""
    site, token, _ = site
    rounds = []
    for round_number in range(DELETE_ROUNDS):
        path = f"/memories/drop-{round_number}/"
        body = {"content": f"A task to drop, round {round_number}.", "user_id": "user-drops", "id": path[10:-1]}
        assert call(site, token, "POST", f"{API}/memories/", json=body).response.status_code == 201
        read_by_all = threading.Barrier(CLAIMERS, timeout=60)

        def drop(api: httpx.Client, path: str = path, read_by_all: threading.Barrier = read_by_all) -> int:
            etag = api.get(path).headers["ETag"]
            read_by_all.wait()
            return api.delete(path, headers={"If-Match": etag}).status_code

        answers = Counter(all_at_once(site, token, drop))
        rounds.append(answers[204])
        assert set(answers) <= {204, 404, 412}, answers
        assert call(site, token, "GET", API + path).response.status_code == 404
    assert rounds == [1] * DELETE_ROUNDS, rounds


def test_clients_updating_and_deleting_a_memory_at_the_same_etag_make_one_change(site):
    """Each round, four clients PATCH and four DELETE one memory at the same ETag, at once: one
    change is acknowledged; an acknowledged update is never deleted unseen."""
    site, token, _ = site
    for round_number in range(DELETE_ROUNDS):
        path = f"/memories/race-{round_number}/"
        body = {"content": f"A task to race for, round {round_number}.", "user_id": "user-race", "id": path[10:-1]}
        assert call(site, token, "POST", f"{API}/memories/", json=body).response.status_code == 201
        read_by_all = threading.Barrier(CLAIMERS, timeout=60)
        turns = itertools.count()

        def race(api: httpx.Client, path: str = path, read_by_all=read_by_all, turns=turns) -> tuple[str, int]:
            deletes = next(turns) % 2 == 1
            etag = api.get(path).headers["ETag"]
            read_by_all.wait()
            if deletes:
                return "delete", api.delete(path, headers={"If-Match": etag}).status_code
            return "patch", api.patch(
                path, json={"metadata": {"claimed": True}}, headers={"If-Match": etag}
            ).status_code

        answers = Counter(all_at_once(site, token, race))
        made = answers[("patch", 200)] + answers[("delete", 204)]
        assert made == 1, answers
        stored = call(site, token, "GET", API + path).response
        assert stored.status_code == (200 if answers[("patch", 200)] else 404), answers


def test_a_counter_incremented_under_if_match_by_clients_at_once_loses_no_acknowledged_write(site):
    """Eight clients each read the counter (its ETag and value), write the value plus one with
    If-Match, and read again after a 412, for COUNTER_SECONDS: every 200 must be an increment
    that the counter keeps."""
    site, token, _ = site
    body = {"content": "A counter.", "user_id": "user-counter", "id": "counter", "metadata": {"n": 0}}
    assert call(site, token, "POST", f"{API}/memories/", json=body).response.status_code == 201
    start_together = threading.Barrier(CLAIMERS, timeout=60)
    stop = time.monotonic() + COUNTER_SECONDS

    def increment(api: httpx.Client) -> Counter[int]:
        answers: Counter[int] = Counter()
        start_together.wait()
        while time.monotonic() < stop:
            read = api.get("/memories/counter/")
            count = read.json()["metadata"]["n"]
            written = api.patch(
                "/memories/counter/", json={"metadata": {"n": count + 1}}, headers={"If-Match": read.headers["ETag"]}
            )
            answers[written.status_code] += 1
        return answers

    answers = sum(all_at_once(site, token, increment), Counter())
    stored = call(site, token, "GET", f"{API}/memories/counter/").response
    assert set(answers) <= {200, 412}, answers
    assert answers[200] and answers[412], answers  # they did race
    assert stored.json()["metadata"]["n"] == answers[200], answers
    assert stored.headers["ETag"] == f'"{answers[200] + 1}"'


def test_workers_that_open_a_new_store_at_once_each_create_or_find_its_schema(tmp_path):
    """A fresh deployment: the store does not exist yet, and the first requests reach both workers
    at once; every one is answered, and the store holds every memory they wrote."""
    site = Site(tmp_path)
    token = site.make_curator()
    headers = {"Authorization": f"Bearer {token}", "Connection": "close"}

    def first(n: int) -> int:
        if n % 2:
            body = {"content": f"First memory {n}.", "user_id": "early", "id": f"early-{n}"}
            return httpx.post(f"{site.base}{API}/memories/", json=body, headers=headers, timeout=60).status_code
        body = {"query": "first memory", "user_id": "early"}
        return httpx.post(f"{site.base}{API}/search/", json=body, headers=headers, timeout=60).status_code

    try:
        site.serve(workers=WORKERS, threads=THREADS)
        assert not site.store_path.exists()
        with ThreadPoolExecutor(8) as pool:
            answers = Counter(pool.map(first, range(16)))
        listed = httpx.get(f"{site.base}{API}/memories/?user_id=early", headers=headers, timeout=60).json()
    finally:
        site.stop()
    assert answers == {200: 8, 201: 8}, f"{answers}\n{site.log()[-3000:]}"
    assert sorted(row["id"] for row in listed["results"]) == sorted(f"early-{n}" for n in range(1, 16, 2))
