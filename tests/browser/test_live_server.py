"""The live server under a page's overlapping requests (issue 26): a graph page and the data it
preloads, a thread's images, htmx fragments, a script's fetches all arrive at once. Every one of
them looks the session up; none may find it missing (the browser's cookie would be deleted and the
next page be the login page), fail on a locked table, or lose what another one wrote."""

from __future__ import annotations

import threading

from django.db import connection, connections
from playwright.sync_api import Page

from memory.models import ApiToken, ImportJob
from tests.browser.support import LOGIN_PATH

ROUNDS = 5
WRITES = 8  # tokens made per round, each by its own POST
READS = 16  # pages asked for per round, alongside

OVERLAPPING = """
async ([round, writes, reads]) => {
  const csrf = document.querySelector('input[name=csrfmiddlewaretoken]').value;
  const ask = (method, url, body) => fetch(url, {method, body, redirect: 'manual', credentials: 'same-origin'})
    .then((r) => `${method} ${url} ${r.type === 'opaqueredirect' ? 'redirected' : r.status}`,
          (e) => `${method} ${url} ${e}`);
  const requests = [];
  for (let i = 0; i < Math.max(writes, reads); i++) {
    if (i < writes) {
      const form = new URLSearchParams({csrfmiddlewaretoken: csrf, name: `r${round}-t${i}`, role: 'viewer'});
      requests.push(ask('POST', '/settings/tokens/', form));
    }
    if (i < reads) requests.push(ask('GET', i % 2 ? '/settings/tokens/' : '/history/'));
  }
  return Promise.all(requests);
}
"""


def test_overlapping_requests_keep_the_session_and_every_write(logged_in_page: Page, curator):
    page = logged_in_page
    for round_ in range(ROUNDS):
        page.goto("/settings/tokens/")
        assert LOGIN_PATH not in page.url, f"logged out before round {round_}: {page.url}"

        answers = page.evaluate(OVERLAPPING, [round_, WRITES, READS])

        failed = [answer for answer in answers if not answer.endswith(" 200")]
        assert failed == [], f"round {round_}: {len(failed)} of {len(answers)} answers were not a 200: {failed}"
    page.goto("/settings/tokens/")
    assert LOGIN_PATH not in page.url, f"logged out after the last round: {page.url}"
    made = set(ApiToken.objects.filter(user=curator).values_list("name", flat=True))
    assert made == {f"r{round_}-t{i}" for round_ in range(ROUNDS) for i in range(WRITES)}


def test_a_background_thread_writes_while_a_request_reads_the_same_table(live_app, django_db_serialized_rollback):
    """An import job's thread (its own connection to the shared in-memory database) records its
    progress while a request on the live server's connection is still reading that table: in
    SQLite's shared-cache mode the reader's table lock made the write fail at once ("database
    table is locked: memory_importjob")."""
    jobs = [ImportJob.objects.create(file_name=f"{n}.jsonl", size=1, total=1) for n in range(2)]
    reading = connection.cursor()  # the live server's connection: the one its requests use
    reading.execute("SELECT id FROM memory_importjob ORDER BY id")
    assert reading.fetchone()[0] == jobs[0].pk  # the statement is still active: a row is left
    failures: list[BaseException] = []

    def job_thread() -> None:
        try:
            ImportJob.objects.filter(pk=jobs[1].pk).update(done=1)
        except BaseException as error:  # reported by the test's own thread
            failures.append(error)
        finally:
            connections.close_all()

    writer = threading.Thread(target=job_thread)
    writer.start()
    writer.join()
    reading.close()
    assert failures == []
    assert ImportJob.objects.get(pk=jobs[1].pk).done == 1
