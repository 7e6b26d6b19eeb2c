"""A local stand-in for Slack: the Web API (`/api/<method>`) and response URLs (`/response/<id>`).

It records every call, answers the way Slack does (`{"ok": true, ...}`; files_upload_v2's
getUploadURLExternal points at its own /upload/<id>, which keeps the bytes, and
completeUploadExternal shares the files in the thread it names), keeps the messages and the files
posted in each thread (conversations.replies returns the messages, with their metadata), checks every
message and view against Block Kit's limits, and fails calls on demand so tests can drive
retries: 429 with Retry-After, a 200 body with error `ratelimited`, 500 before acting, "500-after"
(posted, then 500), ("timeout", seconds) (posted, then answered too late), or any error code.
Also usable from the command line for the benchmarks: `python tests/slack_standin.py --port 9000`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time
import urllib.parse
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gpuplan.bot.slack.blocks import violations

BOT_USER = "U0GPUPLAN"
BOT_ID = "B0GPUPLAN"
TEAM = "T0TEST"


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.faults: dict[str, deque] = defaultdict(deque)
        self.threads: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)  # what is in each thread
        self.files: dict[str, bytes] = {}  # file id -> the bytes posted to its upload URL
        self.thread_files: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)  # files shared in each
        self.lock = threading.Lock()
        self.counter = 0
        self.socket_url = ""  # set to a SocketModeStandIn's url for Socket Mode tests

    def posted(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The messages that really landed in a thread (whatever the poster was told)."""
        with self.lock:
            return list(self.threads[(channel, thread_ts)])

    def shared(self, channel: str, thread_ts: str) -> list[tuple[dict[str, Any], bytes]]:
        """The files shared in a thread, each with the bytes uploaded for it."""
        with self.lock:
            return [(f, self.files.get(f["id"], b"")) for f in self.thread_files[(channel, thread_ts)]]

    def fail(self, method: str, *faults: Any) -> None:
        """Queue faults for the next calls of `method`: 429, 500, "ratelimited", ("timeout", seconds)."""
        with self.lock:
            self.faults[method].extend(faults)

    def next_fault(self, method: str) -> Any:
        with self.lock:
            return self.faults[method].popleft() if self.faults[method] else None

    def record(self, call: dict[str, Any]) -> None:
        with self.lock:
            self.calls.append(call)

    def of(self, method: str) -> list[dict[str, Any]]:
        with self.lock:
            return [c for c in self.calls if c["method"] == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 10.0) -> list[dict[str, Any]]:
        """The calls of `method` once there are `count` successful ones (or whatever came by the timeout)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = [c for c in self.of(method) if c["status"] == 200 and c["response"].get("ok")]
            if len(done) >= count:
                return done
            time.sleep(0.02)
        return [c for c in self.of(method) if c["status"] == 200 and c["response"].get("ok")]

    def clear(self) -> None:
        with self.lock:
            self.calls.clear()
            self.faults.clear()
            self.threads.clear()
            self.files.clear()
            self.thread_files.clear()

    def violations(self) -> list[str]:
        """Every Block Kit limit any recorded message or view broke."""
        out = []
        for call in list(self.calls):
            args = call["args"]
            if "view" in args:
                view = args["view"] if isinstance(args["view"], dict) else json.loads(args["view"])
                kind = "modal" if view.get("type") in ("modal", "home") else "message"
                out += [f"{call['method']}: {v}" for v in violations(view, kind)]
            elif "blocks" in args or "text" in args:
                message = {"text": args.get("text", ""), "blocks": _blocks(args.get("blocks"))}
                out += [f"{call['method']}: {v}" for v in violations(message)]
        return out


def _blocks(value: Any) -> list:
    if value is None:
        return []
    return json.loads(value) if isinstance(value, str) else value


class Handler(BaseHTTPRequestHandler):
    recorder: Recorder
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        """Quiet: the recorder keeps every call; http.server's per-request stderr lines are noise."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        raw = data.decode("utf-8", "replace")  # an upload's bytes (a PNG) are no text: kept apart below
        args = _parse(raw, self.headers.get("Content-Type", ""))
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/api/"):
            method = path[len("/api/") :]
        elif path.startswith("/response/"):
            method = "response_url"
            args["_hook"] = path[len("/response/") :]
        elif path.startswith("/upload/"):  # files_upload_v2 posts each file's bytes here
            method = "file_upload"
            args = {"_file": path[len("/upload/") :], "_bytes": length, "_content": raw, "_data": data}
        else:
            method = "unknown"
        fault = self.recorder.next_fault(method)
        acts = fault is None or fault == "500-after" or (isinstance(fault, tuple) and fault[0] == "timeout")
        status, headers, response = 200, {}, self._answer(method, args, acts)
        if fault == 429:
            status, headers, response = 429, {"Retry-After": "1"}, {"ok": False, "error": "ratelimited"}
        elif fault in (500, "500-after"):  # "500-after" acted first (see `acts`)
            status, response = 500, {"ok": False, "error": "internal_error"}
        elif fault == "ratelimited":  # the error in a 200 body, with a hint to wait
            headers, response = {"Retry-After": "0"}, {"ok": False, "error": "ratelimited"}
        elif isinstance(fault, tuple) and fault[0] == "timeout":
            time.sleep(fault[1])
        elif isinstance(fault, str):  # any other Slack error code, with HTTP 200 as Slack sends them
            response = {"ok": False, "error": fault}
        self.recorder.record(
            {
                "method": method,
                "args": args,
                "status": status,
                "response": response,
                "auth": self.headers.get("Authorization", ""),
                "at": time.time(),
            }
        )
        payload = json.dumps(response).encode()
        try:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout fault): nobody to answer
            return

    def _answer(self, method: str, args: dict[str, Any], acts: bool) -> dict[str, Any]:
        with self.recorder.lock:
            self.recorder.counter += 1
            n = self.recorder.counter
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://test.slack.com/",
                "team": "test",
                "user": "gpuplan",
                "team_id": TEAM,
                "user_id": BOT_USER,
                "bot_id": BOT_ID,
                "is_enterprise_install": False,
            }
        if method == "chat.postMessage":
            ts = f"{1700000000 + n}.{n:06d}"
            message = {"text": args.get("text", ""), "ts": ts, "bot_id": BOT_ID, "metadata": args.get("metadata")}
            if acts:
                with self.recorder.lock:
                    self.recorder.threads[(args.get("channel", ""), args.get("thread_ts") or ts)].append(message)
            return {"ok": True, "channel": args.get("channel"), "ts": ts, "message": message}
        if method == "apps.connections.open":  # Socket Mode: where the WebSocket stand-in listens
            return (
                {"ok": True, "url": self.recorder.socket_url}
                if self.recorder.socket_url
                else {"ok": False, "error": "socket_mode_not_enabled"}
            )
        if method == "conversations.replies":
            with self.recorder.lock:
                messages = list(self.recorder.threads[(args.get("channel", ""), args.get("ts", ""))])
            return {"ok": True, "messages": messages, "has_more": False}
        if method in ("views.open", "views.publish", "views.update"):
            view = args.get("view")
            view = json.loads(view) if isinstance(view, str) else view
            return {"ok": True, "view": {"id": f"V{n:08d}", **(view or {})}}
        if method == "response_url":
            return {"ok": True}
        if method == "conversations.open":
            return {"ok": True, "channel": {"id": f"D{args.get('users', 'U')[1:]}"}}
        if method == "files.getUploadURLExternal":
            file_id = f"F{n:08d}"
            port = self.server.server_address[1]
            return {"ok": True, "upload_url": f"http://127.0.0.1:{port}/upload/{file_id}", "file_id": file_id}
        if method == "file_upload":
            if acts:
                with self.recorder.lock:
                    self.recorder.files[args["_file"]] = args["_data"]
            return {"ok": True}
        if method == "files.completeUploadExternal":
            return self._complete_upload(args, n, acts)
        return {"ok": True}

    def _complete_upload(self, args: dict[str, Any], n: int, acts: bool) -> dict[str, Any]:
        """The uploaded files shared in the channel, in the thread when one is named (kept apart
        from the thread's messages, which conversations.replies returns)."""
        files = args.get("files")
        files = json.loads(files) if isinstance(files, str) else files or []
        shared = [{"id": f["id"], "title": f.get("title", ""), "ts": f"{1700000000 + n}.{n:06d}"} for f in files]
        channel = args.get("channel_id", "")
        if acts and channel:
            with self.recorder.lock:
                self.recorder.thread_files[(channel, args.get("thread_ts") or shared[0]["ts"])].extend(shared)
        return {"ok": True, "files": [{"id": f["id"], "title": f["title"]} for f in shared]}


def _parse(raw: str, content_type: str) -> dict[str, Any]:
    if not raw:
        return {}
    if "json" in content_type:
        try:
            value = json.loads(raw)
            return value if isinstance(value, dict) else {"_body": value}
        except ValueError:
            return {"_raw": raw}
    form = urllib.parse.parse_qs(raw, keep_blank_values=True)
    return {k: v[0] for k, v in form.items()}


class SlackStandIn:
    """Start with `with SlackStandIn() as slack:`; `slack.api_url` goes into SLACK_API_URL."""

    def __init__(self, port: int = 0):
        self.recorder = Recorder()
        handler = type("BoundHandler", (Handler,), {"recorder": self.recorder})
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def response_url(self, name: str = "hook") -> str:
        return f"http://127.0.0.1:{self.port}/response/{name}"

    def __enter__(self) -> SlackStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=9000)
    port = ap.parse_args().port
    with SlackStandIn(port) as standin:
        print(f"Slack stand-in at {standin.api_url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            standin.thread.join()


if __name__ == "__main__":
    main()
