"""Fixtures of the web view tests: a project holding known memories (one with three versions
and a review flag, content carrying a ``<script>`` and ``javascript:``/``data:`` links), and
``ynm serve --http`` on 127.0.0.1 serving it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("jinja2")
pytest.importorskip("markdown_it")

HOSTILE = ("Deploys go out on Tuesdays.\n\n"
           "<script>document.title='owned'</script>\n\n"
           "[click me](javascript:alert(1)) and [tab](java\tscript:alert(2)) and "
           "![pixel](data:image/svg+xml;base64,PHN2Zz4=) and [the runbook](https://example.com/run)")
TOKEN = "s3cret-ui-token-0123456789"


@dataclass
class Store:
    """The seeded project and what it holds."""

    path: Path
    memory_id: str  # three records: create, supersede, annotate (flagged for review)
    other_id: str   # links to memory_id
    fillers: list[str]


@pytest.fixture
def store(project: Path, cli_run) -> Store:
    def write(*args: str) -> dict:
        result = cli_run(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    first = write("remember", "--type", "semantic", "--level", "distributed", "--subject",
                  "deploy pipeline", "--tags", "ops,deploy", "--content", HOSTILE)
    memory_id = first["memoryId"]
    write("supersede", memory_id, "--content",
          "Deploys moved to Wednesdays. <img src=x onerror=alert(3)> [again](javascript:void(0))")
    write("annotate", memory_id, "--needs-review", "--reason", "possible duplicate",
          "--tags", "release")
    other = write("remember", "--type", "procedural", "--level", "distributed", "--namespace",
                  "team/api", "--content", "Run the smoke tests before a deploy.",
                  "--links", json.dumps([{"rel": "supports", "to": memory_id}]))
    fillers = [write("remember", "--type", "episodic", "--level", "distributed", "--content",
                     f"Filler note number {n} about the cache.")["memoryId"] for n in range(5)]
    return Store(project, memory_id, other["memoryId"], fillers)
