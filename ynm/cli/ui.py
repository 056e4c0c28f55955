"""``ynm ui``: the read-only web view of the local store (``/ui/``, :mod:`ynm.web`) on
127.0.0.1, opened in the browser. It serves no MCP endpoint (``/mcp`` answers 404): any
process of the machine can reach a loopback port, and the view must not let one write;
``ynm serve --http`` serves ``/mcp``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import click

from ynm.cli._common import inherit_cwd, say


@click.command()
@click.option("--port", type=int, default=None,
              help="Port on 127.0.0.1 (default: $PORT, else 3000; 0: a free port, printed).")
@click.option("--no-open", "no_open", is_flag=True, default=False,
              help="Print the URL instead of opening a browser.")
@click.option("--json", "as_json", is_flag=True, default=False,
              help='Once listening, print one JSON line {"url", "pid"} instead of the '
                   "address line.")
@click.option("-q", "--quiet", is_flag=True, default=False,
              help="Print no address line (errors and the request log still print).")
@click.option("-C", "--cwd", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=inherit_cwd,
              help="Directory the store opens from (default: the current directory).")
def ui(port: int | None, no_open: bool, as_json: bool, quiet: bool, cwd: Path | None) -> None:
    """Read the store in a browser: index, search, each memory's versions, review, status.

    \b
    Examples:
      ynm ui                     # opens http://127.0.0.1:3000/ui/
      ynm ui --port 8080 --no-open
      ynm ui --no-open --json    # {"url": "http://127.0.0.1:3000/ui/", "pid": 4242}

    \b
    Read-only: serves the view at /ui/ (and /health) on 127.0.0.1, never the MCP
    endpoint (/mcp answers 404; ynm serve --http serves it). Auth as ynm serve
    there: none, unless a token is set (YNM_MCP_TOKEN, JWT or introspection
    settings); then the page asks for it once. The address, with the port bound
    (--port 0 picks a free one), is printed once the port is listening; a port in
    use is an error (exit 1). Stop with Ctrl-C.
    """
    from ynm.cli.serve import _require_server_extra

    _require_server_extra(True, "ynm ui")
    from ynm.errors import ConfigError
    from ynm.server.app import MemoryService, log
    from ynm.server.http import http_settings, serve_http
    from ynm.service.config import load_config

    try:
        env: Mapping[str, str] = load_config(cwd).env
    except ConfigError:
        env = os.environ  # the service reports the configuration problem on every page
    settings = http_settings(host="127.0.0.1", port=port, env=env)

    def listening(bound: int) -> None:
        url = f"http://127.0.0.1:{bound}/ui/"
        if as_json:
            import json

            click.echo(json.dumps({"url": url, "pid": os.getpid()}))
        elif not quiet:
            say(f"ynm ui: {url}")
        if not no_open:
            _open_browser(url)

    service = MemoryService(cwd, personal=settings.personal)
    service.open()
    try:
        try:
            serve_http(service, settings.door, settings.host, settings.port,
                       on_listening=listening, mcp=False)
        except KeyboardInterrupt:
            pass
        log("stopped")
    finally:
        service.close()


def _open_browser(url: str) -> None:
    """Open ``url`` in the default browser, in a background thread (some browsers' launchers
    wait for the window); the port is already listening, so the page loads."""
    import threading
    import webbrowser

    def open_it() -> None:
        if not webbrowser.open(url):
            say(f"no browser found: open {url}", err=True)

    threading.Thread(target=open_it, name="ynm-ui-open", daemon=True).start()
