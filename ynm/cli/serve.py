"""``ynm serve``: the MCP server over stdio (default) or streamable HTTP (reference/server.md
§2.1)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from pathlib import Path

import click

from ynm.cli._common import inherit_cwd, say


@click.command()
@click.option("--http", "http", is_flag=True, default=False,
              help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("--stdio", "stdio", is_flag=True, default=False,
              help="Serve stdio (the default; refused with --http).")
@click.option("-C", "--cwd", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=inherit_cwd,
              help="Directory the service opens from (default: the current directory).")
@click.option("--host", default=None,
              help="HTTP bind address (default: $YNM_HTTP_HOST, else localhost).")
@click.option("--port", type=int, default=None, help="HTTP port (default: $PORT, else 3000).")
@click.option("--token", default=None,
              help="Static bearer token HTTP clients must send; a comma list accepts each "
                   "(default: JWT or introspection auth from the environment, else "
                   "$YNM_MCP_TOKEN).")
@click.option("--allow-origin", multiple=True,
              help="Browser Origins allowed besides loopback (repeatable, comma-separated).")
@click.option("--allow-host", multiple=True,
              help="Host headers allowed besides loopback and the bind address (name or "
                   "name:port; repeatable, comma-separated); * turns the check off "
                   "(default: $YNM_ALLOWED_HOSTS).")
@click.option("--allow-open", "allow_open", is_flag=True, default=False,
              help="Serve a non-loopback address without auth (refused otherwise).")
@click.option("--no-personal", "no_personal", is_flag=True, default=False,
              help="Mount no personal store (a shared, hosted server).")
@click.option("--dream-every", "dream_every", default=None, metavar="INTERVAL",
              help="With --http: consolidate (every pass) at this interval, e.g. 30s, 15m, 2h, "
                   "1d; a bare number is milliseconds (default: $YNM_DREAM_EVERY, else off).")
@click.option("--sync-every", "sync_every", default=None, metavar="INTERVAL",
              help="With --http: sync the distributed mounts at this interval "
                   "(default: $YNM_SYNC_EVERY, else off).")
@click.option("--modern-only", "modern_only", is_flag=True, default=False,
              help="Refuse clients of the handshake-era MCP protocol versions (serve only "
                   "2026-07-28).")
def serve(http: bool, stdio: bool, cwd: Path | None, host: str | None, port: int | None,
          token: str | None, allow_origin: tuple[str, ...], allow_host: tuple[str, ...],
          allow_open: bool, no_personal: bool, dream_every: str | None,
          sync_every: str | None, modern_only: bool) -> None:
    """Run the MCP server: stdio by default, streamable HTTP with --http.

    \b
    Examples:
      ynm serve                               # stdio, for a local agent client
      ynm serve --http --port 3000 --token "$TOKEN"
      ynm serve --http --host 0.0.0.0 --token "$TOKEN" --allow-host mem.example.com \\
                --cwd /srv/memory.git --dream-every 15m --sync-every 5m

    \b
    A bind address other than loopback (localhost, 127.x, ::1) needs auth (or
    --allow-open) and mounts no personal store. Auth, first match wins: --token,
    YNM_JWKS_URL (JWT), YNM_OAUTH_INTROSPECTION_URL, YNM_MCP_TOKEN (docs/cli.md).
    """
    if stdio and http:
        from ynm.errors import InvalidInput

        raise InvalidInput("--stdio and --http: choose one transport")
    _require_server_extra(http)
    from ynm.server.app import MemoryService, log
    from ynm.server.scheduler import schedule_settings

    settings = audit = None
    # without --http: refuses --dream-every/--sync-every (a stdio server runs no timers)
    schedule = schedule_settings(dream_every=dream_every, sync_every=sync_every, http=False,
                                 env={}) if not http else None
    if http:
        from ynm.errors import ConfigError
        from ynm.server.http import http_settings, split_list
        from ynm.service.config import load_config

        # the variables every command sees: the environment, then $YNM_HOME/env and
        # <repo>/.env (reference/cli.md §5.1), so a token kept there is not ignored
        try:
            env: Mapping[str, str] = load_config(cwd).env
        except ConfigError:
            env = os.environ  # the service reports the configuration problem on every call
        settings = http_settings(host=host, port=port, token=token,
                                 allow_origin=split_list(*allow_origin),
                                 allow_host=split_list(*allow_host), allow_open=allow_open,
                                 personal=not no_personal, modern_only=modern_only, env=env)
        schedule = schedule_settings(dream_every=dream_every, sync_every=sync_every,
                                     http=True, env=env)
        from ynm.server.audit import audit_sink

        audit = audit_sink(env, settings.door.auth_mode)  # YNM_AUDIT, refused by key if bad
        for note in settings.notes:
            log(note)
    service = MemoryService(cwd, personal=settings.personal if settings else not no_personal)
    service.open()
    try:
        if not http:
            import anyio

            from ynm.server.app import build_server

            server = build_server(service)
            try:
                anyio.run(partial(serve_modern_stdio, server) if modern_only
                          else server.run_stdio_async)
            except KeyboardInterrupt:
                pass
            return
        from ynm.server.http import serve_http
        from ynm.server.scheduler import Scheduler

        assert settings is not None and schedule is not None
        service.warm()  # the first hosted recall must not wait on the model load
        try:
            serve_http(service, settings.door, settings.host, settings.port,
                       Scheduler(service, schedule) if schedule else None, audit)
        except KeyboardInterrupt:
            pass  # uvicorn re-raises the signal it stopped on, or returns: stopped either way
        log("stopped")
    finally:
        service.close()


async def serve_modern_stdio(server: object) -> None:
    """Serve ``server`` (an ``MCPServer``) on stdio speaking only the modern protocol
    (2026-07-28): a client opening with the ``initialize`` handshake gets the SDK's
    ``UNSUPPORTED_PROTOCOL_VERSION`` error naming the versions served (``--modern-only``,
    reference/server.md §1.1). Uses the SDK's modern stream loop (``mcp.server.runner``),
    which its dual-era loop runs for a modern client."""
    from mcp.server.runner import _serve_modern_stream
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # type: ignore[attr-defined]
    async with stdio_server() as (read_stream, write_stream), \
            lowlevel.lifespan(lowlevel) as state:
        try:
            await _serve_modern_stream(lowlevel, read_stream, write_stream,
                                       lifespan_state=state, raise_exceptions=False)
        finally:
            await write_stream.aclose()


def mcp_main(argv: list[str] | None = None) -> None:
    """The ``ynm-mcp`` console script: ``ynm serve`` under the reference's second name
    (reference/cli.md §1, server.md §2.1), same flags, plus ``--version`` printing
    ``ynm-mcp <version>``. Errors are ``Error: <message>`` on stderr with ynm's exit codes."""
    import sys

    from ynm import __version__
    from ynm.errors import YnmError, debugging, describe_unexpected

    args = list(sys.argv[1:] if argv is None else argv)
    if "--version" in args:
        click.echo(f"ynm-mcp {__version__}")
        return
    try:
        serve.main(args=args, prog_name="ynm-mcp", standalone_mode=False)
    except YnmError as err:
        say(f"Error: {err}", err=True)
        sys.exit(err.exit_code)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except click.Abort:
        sys.exit(1)
    except Exception as err:  # noqa: BLE001 - one line, as ynm's own commands
        if debugging():
            raise
        say(f"Error: {describe_unexpected(err)} (set YNM_DEBUG=1 for the traceback)",
                   err=True)
        sys.exit(1)


def _require_server_extra(http: bool, command: str = "ynm serve") -> None:
    """Import what serving needs, before anything else starts; ``command`` is the one named
    in the error (``ynm serve`` or ``ynm ui``).

    Raises:
        MissingExtra: ``<command> needs the server extra (<module> is not installed): pip
            install 'ynm[server]', or pip install -e '.[server]' in a checkout`` (exit 1), for the MCP SDK, anyio, and, with ``--http``,
            uvicorn, starlette, Jinja2 and markdown-it-py.
    """
    from ynm.errors import missing_extra

    try:
        import anyio  # noqa: F401
        import mcp.server.mcpserver  # noqa: F401
        import mcp_types  # noqa: F401

        if http:
            import jinja2  # noqa: F401  (the web view at /ui/, ynm.web)
            import markdown_it  # noqa: F401
            import starlette  # noqa: F401
            import uvicorn  # noqa: F401
    except ImportError as err:
        raise missing_extra(err, command, "server") from None
