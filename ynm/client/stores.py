"""Where queued writes wait: a small key-value protocol (keys by prefix, get, create-if-absent,
compare-and-set, delete) and :class:`SQLQueueStore`, its implementation on SQLAlchemy Core for
a SQLite file (the embedded default) or a PostgreSQL database shared by a pool of workers on
several machines (seed 003_b7c8dac142c7aed9.txt, Queue: ``Store store.Store``).

SQLAlchemy is imported when a store is made, not with ``ynm.client``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

DEFAULT_FILE = "queue.sqlite"
TABLE = "ynm_client_queue"


class QueueStore(Protocol):
    """The store a :class:`~ynm.client.queue.Queue` needs. Values are text (JSON documents);
    every document carries a version that each successful write moves on, for
    compare-and-set."""

    def keys(self, prefix: str) -> list[str]:
        """Every key starting with ``prefix``, sorted (byte order)."""
        ...

    def get(self, key: str) -> tuple[str, int] | None:
        """``(value, version)``, or None when there is no such key."""
        ...

    def create(self, key: str, value: str) -> bool:
        """Store ``value`` under ``key`` unless the key exists; True when it was stored."""
        ...

    def compare_and_set(self, key: str, value: str, version: int) -> bool:
        """Replace the value only if the key still has ``version``; True when replaced."""
        ...

    def delete(self, key: str, version: int | None = None) -> bool:
        """Delete ``key`` (only at ``version`` when given); True when a document went."""
        ...


def default_url() -> str:
    """``sqlite:///$YNM_HOME/queue.sqlite`` (``~/.ynm`` when ``YNM_HOME`` is unset): the
    embedded store beside the user's ynm store."""
    home = os.environ.get("YNM_HOME") or "~/.ynm"
    return "sqlite:///" + str(Path(home).expanduser().absolute() / DEFAULT_FILE)


def store_url(target: str | os.PathLike[str] | None) -> str:
    """A SQLAlchemy URL for ``target``: a URL (``sqlite:///...``, ``postgresql+psycopg://...``)
    is kept, a file path becomes ``sqlite:///<absolute path>``, None is :func:`default_url`."""
    if target is None:
        return default_url()
    text = os.fspath(target)
    if "://" in text:
        return text
    return "sqlite:///" + str(Path(text).expanduser().absolute())


class SQLQueueStore:
    """:class:`QueueStore` on SQLAlchemy Core: one table ``ynm_client_queue`` (key, value,
    version), created on first use.

    Args:
        url: a SQLAlchemy URL (``sqlite:///path/queue.sqlite``,
            ``postgresql+psycopg://user:pw@host/db``), a file path, or None for
            ``$YNM_HOME/queue.sqlite``. A SQLite file runs in WAL mode with a 30 s busy
            timeout, so several processes on one machine can share it; for workers on several
            machines use PostgreSQL (``pip install 'ynm[client]'`` brings the driver).

    Raises:
        ValueError: a URL SQLAlchemy cannot parse, or whose driver is not installed.
    """

    def __init__(self, url: str | os.PathLike[str] | None = None) -> None:
        import sqlalchemy as sa

        self.url = store_url(url)
        try:
            parsed = sa.engine.make_url(self.url)
        except (sa.exc.ArgumentError, ValueError) as err:
            raise ValueError(f"not a database URL: {self.url!r} ({err})") from None
        kwargs: dict[str, Any] = {}
        self._sqlite = parsed.get_backend_name() == "sqlite"
        if self._sqlite:
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"timeout": 30}
        try:
            self._engine = sa.create_engine(parsed, **kwargs)
        except (ImportError, sa.exc.NoSuchModuleError) as err:
            raise ValueError(f"cannot open {self.display_url}: {err} (pip install "
                             "'ynm[client]')") from None
        if self._sqlite:
            sa.event.listen(self._engine, "connect", _sqlite_pragmas)
        meta = sa.MetaData()
        self._table = sa.Table(
            TABLE, meta,
            sa.Column("key", sa.String(255), primary_key=True),
            sa.Column("value", sa.Text, nullable=False),
            sa.Column("version", sa.Integer, nullable=False),
        )
        self._meta = meta
        self._ready = False

    @property
    def display_url(self) -> str:
        """The URL with any password hidden."""
        import sqlalchemy as sa

        return sa.engine.make_url(self.url).render_as_string(hide_password=True)

    def __repr__(self) -> str:
        return f"SQLQueueStore({self.display_url!r})"

    def _begin(self):
        import sqlalchemy as sa

        if not self._ready:
            try:
                self._meta.create_all(self._engine)
            except sa.exc.DBAPIError:
                # another process created the table at the same moment: it exists now
                self._meta.create_all(self._engine)
            self._ready = True
        return self._engine.begin()

    def keys(self, prefix: str) -> list[str]:
        """See :meth:`QueueStore.keys`; sorted here, not by the database's collation."""
        import sqlalchemy as sa

        t = self._table
        with self._begin() as conn:
            rows = conn.execute(sa.select(t.c.key).where(t.c.key.startswith(prefix,
                                                                            autoescape=True)))
            return sorted(row[0] for row in rows)

    def get(self, key: str) -> tuple[str, int] | None:
        """See :meth:`QueueStore.get`."""
        import sqlalchemy as sa

        t = self._table
        with self._begin() as conn:
            row = conn.execute(sa.select(t.c.value, t.c.version).where(t.c.key == key)).first()
        return None if row is None else (row[0], row[1])

    def create(self, key: str, value: str) -> bool:
        """See :meth:`QueueStore.create`."""
        import sqlalchemy as sa

        try:
            with self._begin() as conn:
                conn.execute(sa.insert(self._table).values(key=key, value=value, version=1))
        except sa.exc.IntegrityError:
            return False
        return True

    def compare_and_set(self, key: str, value: str, version: int) -> bool:
        """See :meth:`QueueStore.compare_and_set`."""
        import sqlalchemy as sa

        t = self._table
        with self._begin() as conn:
            result = conn.execute(sa.update(t).where(t.c.key == key, t.c.version == version)
                                  .values(value=value, version=version + 1))
            return result.rowcount == 1

    def delete(self, key: str, version: int | None = None) -> bool:
        """See :meth:`QueueStore.delete`."""
        import sqlalchemy as sa

        t = self._table
        stmt = sa.delete(t).where(t.c.key == key)
        if version is not None:
            stmt = stmt.where(t.c.version == version)
        with self._begin() as conn:
            return conn.execute(stmt).rowcount == 1

    def close(self) -> None:
        """Close the store's connections."""
        self._engine.dispose()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    # a deleted document's bytes are overwritten, not left in free pages: a record refused as
    # holding a secret leaves no copy of it in the file (queue._with_error)
    cursor.execute("PRAGMA secure_delete=ON")
    cursor.close()
