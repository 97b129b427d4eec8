"""The users of `make loadtest` (bench/loadtest.py runs locust on this file, headless).

Each simulated person works on one user's memories of the seeded store, as a curator: through the
REST API with the curator's token (search, listings, edits: a change of content, a new memory and
its deletion) and through the dashboard with a session (the memory browser, the search workbench).
No think time: each sends its next request as soon as the last one is answered, so the load is
bounded by the number of simulated people (`-u`), not by a request rate.

The environment gives what bench/loadtest.py set up: OAM_LOADTEST_TOKEN (a curator's API token),
OAM_LOADTEST_SESSION (the session cookie of the curator's dashboard login), OAM_LOADTEST_USERS and
OAM_LOADTEST_MEMORIES (the store holds memory-0 … memory-M-1, memory-n being user-(n % U)'s).
Setting up sends no request, so that every request counted is load. Every request is named by
what it does, so that locust's figures are per endpoint; any status but the expected one (an
error status, or a redirect to the login page) is a failure.
"""

from __future__ import annotations

import itertools
import os
import random

from locust import HttpUser, constant, task

API = "/api/v1"
QUERIES = ("window seats", "flight 12 to place 3", "prefers window seats on flight", "place 7")
_people = itertools.count()


class Curator(HttpUser):
    wait_time = constant(0)

    def on_start(self) -> None:
        self.number = next(_people)
        self.rng = random.Random(self.number)
        users, memories = int(os.environ["OAM_LOADTEST_USERS"]), int(os.environ["OAM_LOADTEST_MEMORIES"])
        self.user_id = f"user-{self.number % users}"
        self.memory_ids = [f"memory-{n}" for n in range(self.number % users, memories, users)]
        self.api = {"Authorization": f"Bearer {os.environ['OAM_LOADTEST_TOKEN']}"}
        self.client.cookies.set("sessionid", os.environ["OAM_LOADTEST_SESSION"])
        self.created = 0

    @task(4)
    def api_search(self) -> None:
        body = {"query": self.rng.choice(QUERIES), "user_id": self.user_id, "max_results": 10}
        self.client.post(f"{API}/search/", json=body, headers=self.api, name="API search")

    @task(3)
    def api_list(self) -> None:
        scope = self.rng.choice([f"user_id={self.user_id}&", f"memory_type=fact&user_id={self.user_id}&", ""])
        self.client.get(f"{API}/memories/?{scope}limit=50", headers=self.api, name="API memory list")

    @task(2)
    def dashboard_list(self) -> None:
        self.page(f"/memories/?user_id={self.user_id}", "page: memory browser")

    @task(2)
    def dashboard_search(self) -> None:
        query = self.rng.choice(QUERIES).replace(" ", "+")
        self.page(f"/search/?q={query}&user_id={self.user_id}", "page: search")

    def page(self, url: str, name: str) -> None:
        """A dashboard page, which must answer 200 itself (not send to the login page)."""
        with self.client.get(url, name=name, allow_redirects=False, catch_response=True) as response:
            if response.status_code != 200:
                response.failure(f"{response.status_code} {response.headers.get('Location', '')}")

    @task(3)
    def api_edit(self) -> None:
        memory_id = self.rng.choice(self.memory_ids)
        body = {"content": f"Edited by person {self.number}: {self.rng.choice(QUERIES)} ({self.rng.random():.6f})."}
        self.client.patch(f"{API}/memories/{memory_id}/", json=body, headers=self.api, name="API edit")

    @task(1)
    def api_create_and_delete(self) -> None:
        self.created += 1
        memory_id = f"load-{self.number}-{self.created}"
        body = {"content": f"A new note {self.created} about window seats.", "user_id": self.user_id, "id": memory_id}
        self.client.post(f"{API}/memories/", json=body, headers=self.api, name="API create")
        self.client.delete(f"{API}/memories/{memory_id}/", headers=self.api, name="API delete")
