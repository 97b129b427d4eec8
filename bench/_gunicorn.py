"""A real site in gunicorn over a throwaway store and Django database, for the benchmarks that load
it over loopback (bench/api.py, bench/loadtest.py) and the test of many processes over one store
(tests/web/test_many_processes.py). The leading underscore keeps `make bench` from running it.

`Site` holds the temporary folder's paths and the environment of every process it starts:
settings `bench._api_settings` (the site's own over the temporary Django database, errors logged
to stderr), the store `<folder>/memory.sqlite3`, the hashing embedder, no LLM, DEBUG off as in
production, rate limits far above what a load sends. `manage()` runs a manage.py command with it
(migrate, oam_user, oam_token: the site is set up as its administrator would), `serve()` starts
gunicorn in a process group of its own, and `stop()` ends that group, even from a `finally`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
ACCESS_LOG_FORMAT = '%(p)s %({x-probe}i)s "%(r)s" %(s)s'
"""gunicorn's access log line: the pid of the worker that answered, the request's X-Probe header (a
client's name for it), the request line, the status."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def password_of(username: str) -> str:
    return f"{username}-password-long-enough"


@dataclass
class Site:
    folder: Path
    throttle_rate: str = "1000000/second"
    server: subprocess.Popen | None = None
    port: int = 0
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "bench._api_settings",
            "OAM_BENCH_DATABASE": str(self.folder / "django.sqlite3"),
            "OAM_STORE_URL": f"sqlite://{self.store_path}",
            "OAM_EMBEDDER": "hashing",
            "OAM_LLM_BASE_URL": "",
            "OAM_DEBUG": "0",
            "OAM_SECRET_KEY": "bench-and-test-only-" + "k" * 40,
            "OAM_API_TOKEN_RATE": self.throttle_rate,
            "OAM_API_USER_RATE": self.throttle_rate,
            "PYTHONPATH": str(ROOT),
        }

    @property
    def store_path(self) -> Path:
        return self.folder / "memory.sqlite3"

    @property
    def error_log(self) -> Path:
        return self.folder / "gunicorn-error.log"

    @property
    def access_log(self) -> Path:
        return self.folder / "gunicorn-access.log"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def manage(self, *arguments: str) -> str:
        """Run `manage.py <arguments>` with the site's environment; its standard output."""
        done = subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode:
            raise RuntimeError(f"manage.py {' '.join(arguments)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def make_curator(self, name: str = "carl") -> str:
        """Migrate, add a curator login (password: `password_of(name)`) and return a curator API
        token of theirs."""
        self.manage("migrate", "--noinput", "--verbosity", "0")
        self.manage("oam_user", "add", name, "--role", "curator", "--password", password_of(name))
        return self.manage("oam_token", "create", name, "--name", "load", "--role", "curator").strip().splitlines()[-1]

    def seed_memories(self, count: int, users: int = 50) -> None:
        """Write `count` memories, `memory-0` … over `users` users (memory-n is user-(n % users)'s) and
        5 agents into the store, through the engine as agents write them (one at a time, each
        embedded and indexed)."""
        from memory.engine import connect, embedder_from_spec

        memory = connect(self.env["OAM_STORE_URL"], embedder=embedder_from_spec(self.env["OAM_EMBEDDER"]))
        types = ("fact", "preference", "guideline", "memory")
        try:
            for n in range(count):
                memory.add_memory(
                    f"Memory {n} of user {n % users}: prefers window seats on flight {n % 97} to place {n % 13}.",
                    memory_type=types[n % len(types)],
                    user_id=f"user-{n % users}",
                    agent_id=f"agent-{n % 5}",
                    metadata={"source": "bench", "n": n},
                    memory_id=f"memory-{n}",
                )
        finally:
            memory.close()

    def session(self, username: str, password: str) -> httpx.Client:
        """A dashboard session of `username`, logged in through the login form; each request on
        a new connection (so that any worker may answer it)."""
        client = httpx.Client(base_url=self.base, headers={"Connection": "close"}, timeout=60)
        client.get("/accounts/login/")
        answer = client.post(
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": client.cookies["csrftoken"]},
        )
        if answer.status_code != 302:
            raise RuntimeError(f"{username} could not log in: {answer.status_code} {answer.text[:500]}")
        return client

    def serve(self, workers: int = 2, threads: int = 1, access_log: bool = False) -> None:
        """Start gunicorn (`threads` > 1: gthread workers) on a free loopback port, and wait until it answers."""
        self.port = free_port()
        command = [sys.executable, "-m", "gunicorn", "--workers", str(workers), "--threads", str(threads)]
        command += ["--bind", f"127.0.0.1:{self.port}", "--chdir", str(ROOT), "--timeout", "120"]
        command += ["--log-level", "warning", "--error-logfile", str(self.error_log)]
        if access_log:
            command += ["--access-logfile", str(self.access_log), "--access-logformat", ACCESS_LOG_FORMAT]
        self.server = subprocess.Popen(
            [*command, "oam_site.wsgi:application"],
            env=self.env,
            cwd=ROOT,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.server.returncode}:\n{self.log()}")
            try:
                if (
                    httpx.get(f"{self.base}/accounts/login/", timeout=10).status_code == 200
                    and len(self.workers()) == workers
                ):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within 120 s:\n{self.log()}")

    def workers(self) -> list[int]:
        """The pids of the server's workers (the master's children)."""
        if self.server is None:
            return []
        children = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue  # gone meanwhile
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.server.pid:
                    children.append(int(entry.name))
        return sorted(children)

    def peak_rss(self) -> dict[int, int]:
        """Each server process's peak resident memory so far (VmHWM, bytes), the master first."""
        peaks = {}
        for pid in [self.server.pid, *self.workers()] if self.server else []:
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
            peaks[pid] = int(line.split()[1]) * 1024
        return peaks

    def log(self) -> str:
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""

    def stop(self) -> None:
        """End the server's process group: SIGTERM, then SIGKILL if it is still there after 30 s."""
        if self.server is None or self.server.poll() is not None:
            return
        try:
            os.killpg(self.server.pid, signal.SIGTERM)
            self.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.server.pid, signal.SIGKILL)
            self.server.wait(timeout=30)
        except ProcessLookupError:
            pass
