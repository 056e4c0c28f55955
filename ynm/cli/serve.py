"""``ynm serve``: the MCP server over stdio (default) or streamable HTTP (reference/server.md
§2.1)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ynm.cli._common import inherit_cwd


def _split(values: tuple[str, ...]) -> list[str]:
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


@click.command()
@click.option("--http", "http", is_flag=True, default=False,
              help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("-C", "--cwd", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=inherit_cwd,
              help="Directory the service opens from (default: the current directory).")
@click.option("--host", default=None,
              help="HTTP bind address (default: $YNM_HTTP_HOST, else localhost).")
@click.option("--port", type=int, default=None, help="HTTP port (default: $PORT, else 3000).")
@click.option("--token", default=None,
              help="Static bearer token HTTP clients must send (default: $YNM_MCP_TOKEN, "
                   "a comma list).")
@click.option("--allow-origin", multiple=True,
              help="Browser Origins allowed besides loopback (repeatable, comma-separated).")
@click.option("--allow-host", multiple=True,
              help="Host headers allowed besides loopback; * turns the check off "
                   "(default: $YNM_ALLOWED_HOSTS; * when binding 0.0.0.0 or ::).")
@click.option("--no-personal", "no_personal", is_flag=True, default=False,
              help="Mount no personal store (a shared, hosted server).")
def serve(http: bool, cwd: Path | None, host: str | None, port: int | None, token: str | None,
          allow_origin: tuple[str, ...], allow_host: tuple[str, ...], no_personal: bool) -> None:
    """Run the MCP server: stdio by default, streamable HTTP with --http.

    \b
    Examples:
      ynm serve                               # stdio, for a local agent client
      ynm serve --http --port 3000 --token "$TOKEN"
      ynm serve --http --host 0.0.0.0 --no-personal --cwd /srv/memory.git
    """
    from ynm.server.app import MemoryService, log

    service = MemoryService(cwd, personal=not no_personal)
    service.open()
    try:
        if not http:
            import anyio

            from ynm.server.app import build_server

            try:
                anyio.run(build_server(service).run_stdio_async)
            except KeyboardInterrupt:
                pass
            return
        from ynm.server.http import FrontDoor, serve_http

        bind = host or os.environ.get("YNM_HTTP_HOST") or "localhost"
        bind_port = port if port is not None else int(os.environ.get("PORT") or 3000)
        tokens = [token] if token else _split((os.environ.get("YNM_MCP_TOKEN") or "",))
        hosts = _split(allow_host) or _split((os.environ.get("YNM_ALLOWED_HOSTS") or "",))
        if bind in ("0.0.0.0", "::"):
            hosts.append("*")
        hosts.append(bind)
        door = FrontDoor(tokens=tokens, allowed_hosts=hosts, allowed_origins=_split(allow_origin))
        serve_http(service, door, bind, bind_port)
    except KeyboardInterrupt:
        log("stopped")
    finally:
        service.close()
