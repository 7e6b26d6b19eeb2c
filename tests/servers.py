"""Start the real web command (gunicorn, as the Procfile runs it) for end-to-end tests and benchmarks."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def procfile_command(kind: str = "web") -> list[str]:
    """The Procfile's command for `kind`, with `python -m` so the test's interpreter runs it."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith(f"{kind}:"):
            words = line.split(":", 1)[1].split()
            if words[0] == "gunicorn":
                return [sys.executable, "-m", "gunicorn", *words[1:]]
            if words[0] == "python":
                return [sys.executable, *words[1:]]
            return words
    raise KeyError(kind)


class WebServer:
    """gunicorn running gpuplan.bot.slack.wsgi:application on a free port, with the given environment."""

    def __init__(
        self,
        env: dict[str, str],
        workers: int = 2,
        port: int | None = None,
        log_path: Path | None = None,
        command: list[str] | None = None,
        health_status: int = 200,
    ):
        self.command = command or procfile_command("web")
        self.health_status = health_status  # what GET /healthz answers once ready (a bare app: 404)
        self.port = port or free_port()
        self.env = {**os.environ, **env, "PORT": str(self.port), "HOST": "127.0.0.1", "WEB_CONCURRENCY": str(workers)}
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 30.0) -> WebServer:
        out = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 (closed in stop)
        self._out = out
        self.process = subprocess.Popen(self.command, env=self.env, cwd=ROOT, stdout=out, stderr=out)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}: {self.log()}")
            if self.healthy():
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"gunicorn did not become healthy: {self.log()}")

    def healthy(self) -> bool:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            conn.request("GET", "/healthz")
            ok = conn.getresponse().status == self.health_status
            conn.close()
            return ok
        except OSError:
            return False

    def worker_pids(self) -> list[int]:
        """The gunicorn workers (children of the master)."""
        out = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path and self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.log_path:
            self._out.close()
