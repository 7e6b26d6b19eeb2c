"""A small signed-request load generator for tests and benchmarks (mixed Slack traffic).

`../shared/tools/slackload.py` sends one kind of request; this sends a mix (slash commands with
different questions, mentions, thread follow-ups, button clicks) and keeps every response, so a
test can check what each request produced (plan ids, statuses), not only how fast it was.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import slack_requests as sr

QUESTIONS = [
    "llama-3-70b full fine-tune on H100, 8k context",
    "70b full",
    "qwen2.5-72b qlora on a single 48GB card",
    "700亿 全参微调 8张H100",
    "llama-3-8b lora gpu=4090",
    "serve llama-3-70b for users in South-East Asia, 32 concurrent chats",
    "我们想用QLoRA微调一个33B的模型，单卡48G够吗？",
    "pretrain 7b on 2T tokens budget $500k",
    "A100 vs H100 for 13b full fine-tune",
    "8张卡还是喂不满怎么办",
]


@dataclass
class Result:
    index: int
    kind: str
    status: int  # 0 when the connection failed
    latency_s: float
    body: bytes = b""
    error: str = ""


@dataclass
class Report:
    results: list[Result] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def errors(self) -> list[Result]:
        return [r for r in self.results if r.status != 200]

    def percentile(self, p: float) -> float:
        latencies = sorted(r.latency_s for r in self.results if r.status == 200)
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else float("nan")

    def summary(self) -> dict:
        ok = [r for r in self.results if r.status == 200]
        return {
            "requests": len(self.results),
            "errors": len(self.errors),
            "rps": round(len(ok) / self.wall_s, 1) if self.wall_s else 0.0,
            "p50_ms": round(self.percentile(0.5), 2),
            "p99_ms": round(self.percentile(0.99), 2),
            "max_ms": round(max((r.latency_s for r in ok), default=0) * 1000, 2),
            "mean_ms": round(statistics.fmean(r.latency_s for r in ok) * 1000, 2) if ok else None,
        }

    def plan_ids(self) -> list[str]:
        """The plan ids that successful command responses handed out."""
        ids = []
        for r in self.results:
            if r.status == 200 and r.kind == "command" and r.body:
                blocks = json.loads(r.body).get("blocks", [])
                ids += [b["block_id"][len("plan:") :] for b in blocks if b.get("block_id", "").startswith("plan:")]
        return ids


def mixed_request(i: int, response_url: str) -> tuple[str, bytes, str]:
    """Request number i of a mixed run: mostly commands, with mentions, follow-ups and clicks."""
    kind = ("command", "command", "command", "mention", "follow_up", "command", "action", "command")[i % 8]
    question = QUESTIONS[i % len(QUESTIONS)]
    if kind == "command":
        body, ctype = sr.command(question, response_url=response_url, user=f"U{i % 40:07d}X")
    elif kind == "mention":
        body, ctype = sr.mention(question, f"1800000000.{i:06d}", f"EvLoad{i}-{time.time_ns()}")
    elif kind == "follow_up":
        thread = f"1800000000.{i - 1:06d}"
        body, ctype = sr.message(
            "what about 16k context?", f"1800000001.{i:06d}", f"EvLoadF{i}-{time.time_ns()}", thread_ts=thread
        )
    else:
        body, ctype = sr.block_action(sr.press("show_math", "zzzzzzzz"), response_url)
    return kind, body, ctype


def run(
    port: int,
    n: int,
    concurrency: int,
    make: Callable[[int], tuple[str, bytes, str]],
    on_progress: Callable[[int], None] | None = None,
    timeout: float = 30.0,
) -> Report:
    """Send n requests over `concurrency` persistent connections; returns every result."""
    report = Report()
    lock = threading.Lock()
    counter = iter(range(n))

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                break
            kind, body, ctype = make(i)
            headers = {"Content-Type": ctype, **sr.sign(body)}
            start = time.perf_counter()
            try:
                conn.request("POST", "/slack/events", body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                result = Result(i, kind, response.status, time.perf_counter() - start, data)
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
                result = Result(i, kind, 0, time.perf_counter() - start, error=type(exc).__name__)
            with lock:
                report.results.append(result)
                done = len(report.results)
            if on_progress:
                on_progress(done)
        conn.close()

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report.wall_s = time.perf_counter() - start
    return report
