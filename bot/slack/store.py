"""What the Slack app remembers, through SQLAlchemy Core: SQLite by default, PostgreSQL by URL.

- plans: every answered plan under a short id (history, `show <id>`, the buttons on a message);
- conversations: the request behind each Slack thread, so a follow-up changes it;
- events: event ids already taken, so Slack's retries never produce a second reply.

Every write is one short transaction; uniqueness is left to the database (primary keys), so
several gunicorn workers and several machines sharing one database stay consistent.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

try:  # POSIX: cross-process write lock for SQLite; elsewhere the thread lock alone
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

from gpuplan.bot.answer import Answer
from gpuplan.estimator.schema import Request

metadata = sa.MetaData()

plans = sa.Table(
    "gpuplan_plans",
    metadata,
    sa.Column("id", sa.String(12), primary_key=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("team_id", sa.String(32), nullable=False, default=""),
    sa.Column("user_id", sa.String(32), nullable=False, default=""),
    sa.Column("channel_id", sa.String(32), nullable=False, default=""),
    sa.Column("source", sa.String(16), nullable=False),  # command, mention, dm, thread, action, shortcut
    sa.Column("lang", sa.String(2), nullable=False),
    sa.Column("question", sa.Text, nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("plan", sa.Text, nullable=False),  # Answer.model_dump_json(): replayed exactly by `show`
    sa.Index("gpuplan_plans_user", "team_id", "user_id", "created_at"),
)

conversations = sa.Table(
    "gpuplan_conversations",
    metadata,
    sa.Column("channel_id", sa.String(32), primary_key=True),
    sa.Column("thread_ts", sa.String(32), primary_key=True),
    sa.Column("request", sa.Text, nullable=False),  # the Request the thread is about, as JSON
    sa.Column("lang", sa.String(2), nullable=False),
    sa.Column("plan_id", sa.String(12), nullable=True),
    sa.Column("updated_at", sa.Float, nullable=False),
)

events = sa.Table(
    "gpuplan_events",
    metadata,
    sa.Column("event_id", sa.String(64), primary_key=True),
    sa.Column("received_at", sa.Float, nullable=False),
    sa.Index("gpuplan_events_received", "received_at"),
)

_INSERT_PLAN = plans.insert()  # built once: SQLAlchemy caches the compiled form per statement
_INSERT_EVENT = events.insert()

# Short ids: 8 characters from an alphabet without look-alikes (0/o, 1/l/i): 31^8 ~ 8.5e11
ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
ID_LENGTH = 8
EVENT_TTL_S = 24 * 3600  # Slack retries within minutes; a day is ample
PRUNE_EVERY = 1000  # claims between prunes of old event ids, per process
SCHEMA_LOCK_KEY = 0x67707570  # "gpup": the advisory lock that serialises schema creation


def new_id() -> str:
    """A random short id: 8 base-31 digits of one 48-bit draw from the OS's CSPRNG (one syscall)."""
    value = int.from_bytes(secrets.token_bytes(6), "big")
    digits = []
    for _ in range(ID_LENGTH):
        value, digit = divmod(value, len(ID_ALPHABET))
        digits.append(ID_ALPHABET[digit])
    return "".join(digits)


@dataclass(frozen=True)
class StoredPlan:
    id: str
    created_at: float
    user_id: str
    channel_id: str
    source: str
    lang: str
    question: str
    summary: str
    plan_json: str

    def plan(self) -> Answer:
        return Answer.model_validate_json(self.plan_json)


def make_engine(url: str) -> Engine:
    """An engine tuned for many short transactions from several processes."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 15, "check_same_thread": False})

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")  # readers never block the writer
            cursor.execute("PRAGMA synchronous=NORMAL")  # durable at each WAL checkpoint, safe under WAL
            cursor.execute("PRAGMA busy_timeout=15000")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5, pool_recycle=1800)


class Store:
    def __init__(self, url: str, create: bool = True):
        self.url = url
        self.engine = make_engine(url)
        # SQLite has one writer at a time and makes waiters sleep and retry (busy_timeout), which
        # costs milliseconds under load; writers queue on locks instead, which wake them at once.
        self._write_lock = _SqliteWriteLock(url) if url.startswith("sqlite") else contextlib.nullcontext()
        self._claims = 0
        if create:
            self.create_tables()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        """One write transaction (queued behind this process's other writers on SQLite)."""
        with self._write_lock, self.engine.begin() as conn:
            yield conn

    def create_tables(self) -> None:
        """Create missing tables; workers starting together take turns (flock on SQLite, an
        advisory lock on PostgreSQL), so none sees a half-made schema or a duplicate CREATE."""
        with self._write() as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK_KEY})")
            metadata.create_all(conn, checkfirst=True)

    def ping(self) -> None:
        """Raise if the database cannot be reached (the health check)."""
        with self.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))

    def dispose(self) -> None:
        self.engine.dispose()

    # --- plans --------------------------------------------------------------------------------

    def save_plan(
        self,
        plan: Answer,
        question: str,
        summary: str,
        source: str,
        team_id: str = "",
        user_id: str = "",
        channel_id: str = "",
        plan_json: str | None = None,
    ) -> str:
        """Store a plan under a new short id; `plan_json` saves dumping it again when the caller has it."""
        row = {
            "created_at": time.time(),
            "team_id": team_id or "",
            "user_id": user_id or "",
            "channel_id": channel_id or "",
            "source": source,
            "lang": plan.lang,
            "question": question,
            "summary": summary,
            "plan": plan_json or plan.model_dump_json(exclude_defaults=True),
        }
        for _ in range(5):  # a collision among 8.5e11 ids is rare; try again with another
            plan_id = new_id()
            try:
                with self._write() as conn:
                    conn.execute(_INSERT_PLAN, {"id": plan_id, **row})
                return plan_id
            except IntegrityError:
                continue
        raise RuntimeError("could not allocate a plan id")

    def get_plan(self, plan_id: str) -> StoredPlan | None:
        plan_id = (plan_id or "").strip().lower()
        if not plan_id or len(plan_id) > ID_LENGTH * 2:
            return None
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(plans).where(plans.c.id == plan_id)).mappings().first()
        return _stored(row) if row else None

    def recent_plans(self, team_id: str, user_id: str, limit: int = 10) -> list[StoredPlan]:
        query = (
            sa.select(plans)
            .where(plans.c.team_id == (team_id or ""), plans.c.user_id == (user_id or ""))
            .order_by(plans.c.created_at.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [_stored(row) for row in conn.execute(query).mappings()]

    def count_plans(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(plans)).scalar_one())

    # --- conversations ------------------------------------------------------------------------

    def remember_thread(
        self, channel_id: str, thread_ts: str, request: Request, lang: str, plan_id: str | None
    ) -> None:
        values = {
            "request": request.model_dump_json(exclude_none=True),
            "lang": lang,
            "plan_id": plan_id,
            "updated_at": time.time(),
        }
        key = (conversations.c.channel_id == channel_id) & (conversations.c.thread_ts == thread_ts)
        with self._write() as conn:  # update, else insert; a racing insert becomes an update
            if conn.execute(conversations.update().where(key).values(**values)).rowcount:
                return
        try:
            with self._write() as conn:
                conn.execute(conversations.insert().values(channel_id=channel_id, thread_ts=thread_ts, **values))
        except IntegrityError:
            with self._write() as conn:
                conn.execute(conversations.update().where(key).values(**values))

    def thread(self, channel_id: str, thread_ts: str) -> tuple[Request, str, str | None] | None:
        """The request a thread is about, its language and last plan id; None for unknown threads."""
        query = sa.select(conversations).where(
            conversations.c.channel_id == channel_id, conversations.c.thread_ts == thread_ts
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if not row:
            return None
        return Request.model_validate_json(row["request"]), row["lang"], row["plan_id"]

    # --- events -------------------------------------------------------------------------------

    def claim_event(self, event_id: str) -> bool:
        """True for the first delivery of an event, False for every repeat, across processes."""
        if not event_id:
            return True
        self._claims += 1
        if self._claims % PRUNE_EVERY == 0:
            self.prune_events()
        try:
            with self._write() as conn:
                conn.execute(_INSERT_EVENT, {"event_id": event_id[:64], "received_at": time.time()})
            return True
        except IntegrityError:
            return False

    def release_event(self, event_id: str) -> None:
        """Forget an event whose handling failed, so Slack's retry gets another chance."""
        with self._write() as conn:
            conn.execute(events.delete().where(events.c.event_id == event_id[:64]))

    def prune_events(self, older_than_s: float | None = None) -> int:
        """Forget event ids older than a day (EVENT_TTL_S): Slack stopped retrying them long ago."""
        older_than_s = EVENT_TTL_S if older_than_s is None else older_than_s
        with self._write() as conn:
            result = conn.execute(events.delete().where(events.c.received_at < time.time() - older_than_s))
        return result.rowcount or 0


class _SqliteWriteLock:
    """Serialises SQLite writers: a thread lock within the process, an flock on a file beside
    the database across processes (gunicorn's workers). The kernel wakes the next writer the
    moment the lock is free, where SQLite's own busy handler would sleep for milliseconds."""

    def __init__(self, url: str):
        self.threads = threading.Lock()
        database = sa.engine.make_url(url).database
        self.path = f"{database}.write-lock" if database and database != ":memory:" and fcntl else None
        self.fd: int | None = None

    def __enter__(self) -> None:
        self.threads.acquire()
        if self.path:
            if self.fd is None:
                self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if self.path and self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        self.threads.release()


def _stored(row: Any) -> StoredPlan:
    return StoredPlan(
        id=row["id"],
        created_at=row["created_at"],
        user_id=row["user_id"],
        channel_id=row["channel_id"],
        source=row["source"],
        lang=row["lang"],
        question=row["question"],
        summary=row["summary"],
        plan_json=row["plan"],
    )
