"""The live server under a page's overlapping requests (issue 26): a graph page and the data it
preloads, a thread's images, htmx fragments, a script's fetches all arrive at once. Every one of
them looks the session up; none may find it missing (the browser's cookie would be deleted and the
next page be the login page), fail on a locked table, or lose what another one wrote."""

from __future__ import annotations

from playwright.sync_api import Page

from memory.models import ApiToken
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
