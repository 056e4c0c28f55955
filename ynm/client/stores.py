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


class StoreUnusable(ValueError):
    """A store argument that can never be a queue store: empty, a directory, an unknown scheme,
    a missing or unreadable file, a file or database that is not a queue store, or (with
    ``create=False``) a store that does not exist. Refused input: ``ynm outbox`` exits 2 with
    ``invalid input: --store: <message>``; the message names the path or URL."""


class StoreUnavailable(Exception):
    """The queue store failed when it was used: its database is down or unreachable, a file
    is locked past its timeout, the disk is full. Raised by :class:`~ynm.client.queue.Queue`
    (its ``remember`` only when the record could be neither sent nor queued), with the
    store's own error (a SQLAlchemy ``OperationalError``, say) as ``__cause__``; the message
    is ``queue store <url>: <first line of the error>``, the password hidden."""


_DRIVER_EXTRAS = {"sqlalchemy": "client", "psycopg": "client"}
"""The modules a queue store imports that one of ynm's extras brings (pyproject.toml
``[project.optional-dependencies]``), and that extra: a missing one is named with it."""

SCHEMES = ("sqlite", "postgresql")
"""The databases a queue store may live in: a SQLite file, or PostgreSQL through psycopg."""


def default_url() -> str:
    """``sqlite:///$YNM_HOME/queue.sqlite`` (``~/.ynm`` when ``YNM_HOME`` is unset): the
    embedded store beside the user's ynm store."""
    home = os.environ.get("YNM_HOME") or "~/.ynm"
    return "sqlite:///" + str(Path(home).expanduser().absolute() / DEFAULT_FILE)


def store_url(target: str | os.PathLike[str] | None) -> str:
    """A SQLAlchemy URL for ``target``: a URL (``sqlite:///...``, ``postgresql+psycopg://...``)
    is kept, a file path becomes ``sqlite:///<absolute path>``, None is :func:`default_url`.

    Raises:
        StoreUnusable: an empty (or blank) string.
    """
    if target is None:
        return default_url()
    text = os.fspath(target)
    if not text.strip():
        raise StoreUnusable("empty: name a SQLite file or a database URL")
    if "://" in text:
        return text
    return "sqlite:///" + str(Path(text).expanduser().absolute())


def _missing_driver(err: ImportError, url: str) -> Exception:
    """The error for a database driver (or SQLAlchemy) that is not installed, naming the extra
    that brings it, or saying that none does."""
    from ynm.errors import MissingExtra, pip_install

    module = (err.name or "").split(".")[0] or "a driver"
    extra = _DRIVER_EXTRAS.get(module)
    if extra is not None:
        return MissingExtra("a queue store", extra, module)
    return StoreUnusable(f"cannot open {url}: its driver {module} is not installed and no ynm "
                         "extra brings it; use postgresql+psycopg://user@host/db, whose psycopg "
                         f"comes with the client extra: {pip_install('client')}")


def _check_sqlite_file(path: Path, create: bool, default: bool) -> None:
    """Refuse a SQLite store path that cannot be a queue store (see :class:`StoreUnusable`):
    a directory, a missing directory (unless it is the default store's, which the first
    write creates), a missing file when ``create`` is False, an unreadable file, a file that is
    not a SQLite database, or a database holding other tables but not the queue's."""
    import sqlite3

    if path.is_dir():
        raise StoreUnusable(f"{path} is a directory, not a queue store file")
    if not path.exists():
        if not create:
            raise StoreUnusable(f"no queue store at {path}")
        if not default and not path.parent.is_dir():
            raise StoreUnusable(f"no directory {path.parent} for the queue store {path.name}: "
                                "create it first (only the default store's directory is "
                                "created)")
        return
    if not os.access(path, os.R_OK):
        raise StoreUnusable(f"cannot read {path}: permission denied")
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError as err:
        raise StoreUnusable(f"cannot read {path}: {err.strerror or err}") from None
    if head and head != b"SQLite format 3\x00":
        raise StoreUnusable(f"{path} is not a queue store (not a SQLite database)")
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except sqlite3.Error as err:
        raise StoreUnusable(f"{path} is not a queue store ({err})") from None
    if TABLE not in tables and (tables or not create):
        raise StoreUnusable(f"{path} is not a queue store (a SQLite database without the "
                            f"{TABLE} table)")


def _in_memory(database: str | None, query: dict[str, Any]) -> bool:
    """True for a SQLite database that lives in memory and dies with the process: no file
    (``sqlite://``), ``:memory:``, or a ``file:`` URI naming ``:memory:`` or ``mode=memory``."""
    if database is None or database == ":memory:":
        return True
    if database.startswith("file:"):
        return database[len("file:"):].startswith(":memory:") or query.get("mode") == "memory" \
            or "mode=memory" in database
    return False


def _create_private(path: Path) -> None:
    """Create the SQLite file ``path`` empty with mode 0600 unless it exists, so the queue
    (which holds records not yet written, text included) is readable by its owner only;
    SQLite gives its ``-wal`` and ``-shm`` files the database file's mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)


class SQLQueueStore:
    """:class:`QueueStore` on SQLAlchemy Core: one table ``ynm_client_queue`` (key, value,
    version), created by the first write.

    Args:
        url: a SQLAlchemy URL (``sqlite:///path/queue.sqlite``,
            ``postgresql+psycopg://user:pw@host/db``), a file path, or None for
            ``$YNM_HOME/queue.sqlite``. A SQLite file runs in WAL mode with a 30 s busy
            timeout, so several processes on one machine can share it; for workers on several
            machines use PostgreSQL (``pip install 'ynm[client]'`` brings the driver).
        create: True (for a queue): the first write may create the SQLite file, and for the
            default store its directory; reads of a store not created yet find nothing and
            create nothing. False (for an operator looking at a queue, ``ynm outbox``): the
            store must exist, as a file holding the queue table, or a database holding it.

    Raises:
        StoreUnusable: (a ``ValueError``) an argument that can never be a queue store: empty,
            a URL SQLAlchemy cannot parse, a scheme other than ``sqlite``/``postgresql``, a
            directory, a missing directory (the default store's excepted), an unreadable file,
            a file that is not a queue store; with ``create=False`` a store that is not there.
            With ``create=False`` on PostgreSQL the missing table is found by the first call.
        ynm.errors.MissingExtra: SQLAlchemy or psycopg is not installed (the ``client`` extra).
    """

    def __init__(self, url: str | os.PathLike[str] | None = None, *,
                 create: bool = True) -> None:
        try:
            import sqlalchemy as sa
        except ImportError as err:
            raise _missing_driver(err, "a queue store") from None

        self.url = store_url(url)
        self._create = create
        try:
            parsed = sa.engine.make_url(self.url)
        except (sa.exc.ArgumentError, ValueError) as err:
            raise StoreUnusable(f"not a database URL: {self.url!r} ({err})") from None
        backend = parsed.drivername.split("+")[0]
        if backend not in SCHEMES:
            raise StoreUnusable(f"unknown database scheme {parsed.drivername!r} in "
                                f"{self.display_url}: use a SQLite file (a path or "
                                "sqlite:///path) or postgresql+psycopg://user@host/db")
        kwargs: dict[str, Any] = {}
        self._sqlite = backend == "sqlite"
        self._path: Path | None = None  # the SQLite file, None in memory or on PostgreSQL
        if self._sqlite:
            if parsed.database == "":
                raise StoreUnusable(f"{self.url}: no file named (sqlite:///<path>)")
            if _in_memory(parsed.database, dict(parsed.query)):
                raise StoreUnusable(f"{self.url} is an in-memory database: everything queued "
                                    "in it would be lost when the program exits; name a file "
                                    "(sqlite:///<path>)")
            if parsed.database and parsed.database != ":memory:" \
                    and not parsed.database.startswith("file:"):
                self._path = Path(parsed.database).absolute()
                _check_sqlite_file(self._path, create, default=self.url == default_url())
            kwargs["connect_args"] = {"timeout": 30}
        try:
            self._engine = sa.create_engine(parsed, **kwargs)
        except sa.exc.NoSuchModuleError:
            raise StoreUnusable(f"unknown database scheme {parsed.drivername!r} in "
                                f"{self.display_url}: use a SQLite file (a path or "
                                "sqlite:///path) or postgresql+psycopg://user@host/db") from None
        except ImportError as err:
            raise _missing_driver(err, self.display_url) from None
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

    def _unborn(self) -> bool:
        """True while the SQLite file has not been created: reads find nothing in it, and
        only :meth:`create` makes it (a queue's first write)."""
        return not self._ready and self._path is not None and not self._path.exists()

    def _begin(self):
        import sqlalchemy as sa

        if not self._ready and not self._create:
            # an operator's view of a store: it must hold the queue table, never be given one
            if not sa.inspect(self._engine).has_table(TABLE):
                raise StoreUnusable(f"{self.display_url} is not a queue store (no {TABLE} "
                                    "table)")
            self._ready = True
        if not self._ready:
            if self._path is not None:
                # only the default store gets here without its directory (see __init__)
                if not self._path.parent.is_dir():
                    self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                _create_private(self._path)
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

        if self._unborn():
            return []
        t = self._table
        with self._begin() as conn:
            rows = conn.execute(sa.select(t.c.key).where(t.c.key.startswith(prefix,
                                                                            autoescape=True)))
            return sorted(row[0] for row in rows)

    def get(self, key: str) -> tuple[str, int] | None:
        """See :meth:`QueueStore.get`."""
        import sqlalchemy as sa

        if self._unborn():
            return None
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

        if self._unborn():
            return False
        t = self._table
        with self._begin() as conn:
            result = conn.execute(sa.update(t).where(t.c.key == key, t.c.version == version)
                                  .values(value=value, version=version + 1))
            return result.rowcount == 1

    def delete(self, key: str, version: int | None = None) -> bool:
        """See :meth:`QueueStore.delete`."""
        import sqlalchemy as sa

        if self._unborn():
            return False
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
