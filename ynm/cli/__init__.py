"""The ``ynm`` command line. Commands are imported on first use so start-up stays fast."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from ynm import __version__

# command name -> "module:attribute"; every command module keeps its imports light.
COMMANDS = {
    "annotate": "ynm.cli.edit:annotate",
    "audit": "ynm.cli.audit:audit",
    "client": "ynm.cli.client:client",
    "compact": "ynm.cli.compact:compact",
    "context": "ynm.cli.session:context",
    "doctor": "ynm.cli.doctor:doctor",
    "dream": "ynm.cli.dream:dream",
    "export": "ynm.cli.export:export",
    "forget": "ynm.cli.edit:forget",
    "history": "ynm.cli.show:history",
    "hook": "ynm.cli.hook:hook",
    "import": "ynm.cli.import_:import_",
    "init": "ynm.cli.init:init",
    "list": "ynm.cli.list_:list_",
    "login": "ynm.cli.login:login",
    "logout": "ynm.cli.login:logout",
    "outbox": "ynm.cli.outbox:outbox",
    "people": "ynm.cli.people:people",
    "pin": "ynm.cli.edit:pin",
    "promote": "ynm.cli.edit:promote",
    "purge": "ynm.cli.edit:purge",
    "recall": "ynm.cli.recall:recall",
    "reindex": "ynm.cli.reindex:reindex",
    "remember": "ynm.cli.remember:remember",
    "review": "ynm.cli.session:review",
    "serve": "ynm.cli.serve:serve",
    "session": "ynm.cli.session:session",
    "show": "ynm.cli.show:show",
    "status": "ynm.cli.status:status",
    "supersede": "ynm.cli.edit:supersede",
    "sync": "ynm.cli.sync:sync",
    "ui": "ynm.cli.ui:ui",
    "validate": "ynm.cli.validate:validate",
    "wiki": "ynm.cli.wiki:wiki",
}


class LazyGroup(click.Group):
    """A click group that imports a command's module only when that command runs (or when
    ``--help`` lists them), and turns ynm's errors into ``Error: <message>`` and their exit
    code (reference/cli.md §2); a pydantic validation error that escaped a command is
    ``Error: invalid input: <path>: <message>``, exit 2; Ctrl-C is ``Error: interrupted``,
    exit 130. Any other exception is reported as ``Error: <type>: <message>``
    and a hint to set ``YNM_DEBUG=1`` on one line, exit 1; with ``YNM_DEBUG`` set it propagates with its
    traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx: click.Context) -> Any:
        from ynm.cli._common import say
        from ynm.errors import YnmError, debugging, describe_unexpected

        try:
            return super().invoke(ctx)
        except YnmError as err:
            say(f"Error: {err}", err=True)
            if err.hint:
                say(f"hint: {err.hint}", err=True)
            ctx.exit(err.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            # Ctrl-C: what was committed before it stays (every write is one atomic ref
            # update), and the cache catches up on the next command. 130 = 128 + SIGINT.
            say("Error: interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            if not _reader_gone():
                raise
            # `ynm export | head -1`: the reader has all it wanted. Nothing more is written
            # (stdout now points nowhere, so the final flush cannot fail either), and the
            # command did what it was asked: a write stays committed, exit 0.
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(0)
        except Exception as err:  # noqa: BLE001 - a bug or an unforeseen failure: one line
            invalid = _invalid_input(err)
            if invalid is not None:  # a model validated outside parse_input
                say(f"Error: {invalid}", err=True)
                ctx.exit(invalid.exit_code)
            if debugging():
                raise
            if _disk_full(err):
                import tempfile

                where = getattr(err, "filename", None) or (
                    f"the disk of the file written, or of the temporary folder "
                    f"{tempfile.gettempdir()} (TMPDIR)")
                say(f"Error: a disk is full ({describe_unexpected(err)}): {where}; free some "
                    "space there and run the command again", err=True)
                ctx.exit(1)
            if _damaged_cache(err):
                say(f"Error: the search cache is damaged ({str(err).strip()}); run `ynm reindex` "
                    "to rebuild it from git (memories live in git notes: nothing is lost)",
                    err=True)
                ctx.exit(1)
            say(f"Error: {describe_unexpected(err)} (set YNM_DEBUG=1 for the traceback)",
                err=True)
            ctx.exit(1)


def _reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it (``poll`` reports an
    error on it): a broken pipe met elsewhere (a git child's stdin) is a real failure."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _invalid_input(err: BaseException) -> Any:
    """The ``InvalidInput`` of a pydantic validation error (pydantic is loaded when one was
    raised), else None."""
    import sys

    if "pydantic" not in sys.modules:
        return None
    from ynm.model.inputs import invalid_input_from

    return invalid_input_from(err)


def _keep_cwd(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    from ynm.cli._common import CWD_KEY

    if value is not None:
        ctx.meta[CWD_KEY] = value
    return value


def _group_cwd(fn: Any) -> Any:
    from ynm.cli._common import cwd_option

    return cwd_option(callback=_keep_cwd, expose_value=False, is_eager=True)(fn)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ynm")
@_group_cwd
def cli() -> None:
    """Long-term memory for coding agents and their people, kept in git notes.

    \b
    Quick start:
      ynm init                                   # in a git repository
      ynm remember --type semantic --level distributed --content "We deploy on Tuesdays"
      ynm recall "when do we deploy"
      ynm -C ../other-repo recall deploys        # as if started there (like git -C)
    """


def main() -> None:
    """Console entry point.

    When the command is done, the garbage it left is collected once and every object still
    alive is frozen (``gc.freeze``) before the interpreter shuts down: shutdown then frees
    each object as usual (files are flushed and closed, connections closed, finalizers run)
    but its garbage-collector passes no longer walk the tens of thousands of objects that
    pydantic, pygit2 and click leave behind. That walking was 50-80 ms of every ``ynm``
    process, a sixth of a ``ynm recall``; collecting first costs ~10 ms and keeps the cycles
    the command dropped from going unfinalized."""
    try:
        cli(prog_name="ynm")
    finally:
        import gc

        gc.collect()
        gc.freeze()


def _disk_full(err: BaseException) -> bool:
    """Whether ``err`` says the disk is full: SQLite's SQLITE_FULL (13, "database or disk is
    full", a cache or a rebuild's staging that could not grow) or an OSError ENOSPC."""
    import errno

    return (getattr(err, "sqlite_errorcode", None) == 13
            or (isinstance(err, OSError) and err.errno == errno.ENOSPC))


def _damaged_cache(err: BaseException) -> bool:
    """Whether ``err`` is SQLite's report of a cache file damaged inside (SQLITE_CORRUPT,
    SQLITE_NOTADB: ynm.index.schema.DAMAGED_CODES), which ``ynm reindex`` repairs."""
    if getattr(err, "sqlite_errorcode", None) is None:
        return False  # not SQLite's: the cache modules need not be imported to say so
    from ynm.index.schema import is_damaged

    return is_damaged(err)
