"""Each plan's chart (gpuplan.bot.charts), drawn and uploaded into the reply's thread once the reply
is posted, one chart at a time on a thread of its own.

A chart takes a tenth of a second or two to draw (a second for the first, which imports
matplotlib), against milliseconds for the answer, so it never runs where it could hold anything
up: not before the acknowledgement (events are acknowledged first, commands answer in theirs),
not before the reply is posted, and not on Bolt's lazy-listener threads, which post the replies of
other questions. Under a burst the charts past `backlog` are skipped, not queued for minutes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from gpuplan.bot import charts
from gpuplan.bot.answer import Answer
from gpuplan.bot.slack.slack_io import SlackIO

log = logging.getLogger("gpuplan.charts")
# estimate: 8 charts queued is about a second of drawing at 0.13 s each (measured on 2 cores); a
# picture later than that trails its reply by more than it helps
CHART_BACKLOG = 8
CHART_NICENESS = 10  # nice(1)'s default increment


def _yield_cpu() -> None:
    """The chart thread runs at a lower CPU priority than the threads that answer, so on a busy
    machine drawing waits, not acknowledgements (Linux gives each thread its own nice value;
    elsewhere the call may be refused, and the chart thread runs as it is)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), CHART_NICENESS)


class ChartPoster:
    def __init__(self, backlog: int = CHART_BACKLOG):
        self.backlog = backlog
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpuplan-chart", initializer=_yield_cpu)
        self._lock = threading.Lock()
        self._pending = 0
        self._skip_said = False

    def submit(self, io: SlackIO, plan: Answer | None, plan_id: str | None, thread: tuple[str, str]) -> str:
        """Queue the plan's chart for its thread: "queued", "none" (nothing to draw) or "skipped"."""
        if plan is None or plan.estimate is None:
            return "none"
        with self._lock:
            if self._pending >= self.backlog:
                if not self._skip_said:
                    self._skip_said = True
                    log.warning("charts skipped while %d wait to be drawn; said once per process", self.backlog)
                return "skipped"
            self._pending += 1
        self._executor.submit(self._post, io, plan, plan_id, thread)
        return "queued"

    def _post(self, io: SlackIO, plan: Answer, plan_id: str | None, thread: tuple[str, str]) -> None:
        try:
            chart = charts.chart_file(plan)
            if chart is not None:
                io.upload(*thread, chart.data, filename=chart.filename, title=chart.title, alt_text=chart.alt_text)
        except Exception:  # a bug in drawing: the reply is out, the log keeps the traceback
            log.exception("chart failed for plan %s", plan_id)
        finally:
            with self._lock:
                self._pending -= 1

    def wait(self, timeout: float = 10.0) -> bool:
        """Whether every queued chart was posted within `timeout` seconds (for tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self._pending == 0:
                    return True
            time.sleep(0.01)
        return False
