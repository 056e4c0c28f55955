"""A UTF-8 byte order mark at the start of a text input is dropped: import files and stdin,
the project and user config files, env files, client settings and hook payloads all read as
``utf-8-sig`` (docs/cli.md "Text input")."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ynm.cli.hook import read_payload
from ynm.service.config import read_env_file

from .conftest import jsonl, make_record

BOM = "\ufeff".encode()  # EF BB BF


def export_ids(cli_run):
    return sorted(json.loads(line)["id"] for line in cli_run("export").stdout.splitlines())


def test_import_file_with_bom_keeps_the_first_record(project, cli_run, tmp_path):
    a, b = make_record(), make_record()
    path = tmp_path / "bom.jsonl"
    path.write_bytes(BOM + jsonl(a, b).encode())
    result = cli_run("import", path, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"imported": 2, "problems": []}
    assert export_ids(cli_run) == sorted([a["id"], b["id"]])


def test_import_stdin_with_bom(project, cli_run):
    a = make_record()
    result = cli_run("import", "--json", input=BOM + jsonl(a).encode())
    assert json.loads(result.stdout) == {"imported": 1, "problems": []}
    assert export_ids(cli_run) == [a["id"]]


def test_import_of_files_joined_with_cat_drops_each_bom(project, cli_run, tmp_path):
    a, b, c = make_record(), make_record(), make_record()
    joined = BOM + jsonl(a).encode() + BOM + jsonl(b).encode() + BOM + jsonl(c).encode()
    path = tmp_path / "joined.jsonl"
    path.write_bytes(joined.replace(b"\n", b"\r\n"))  # Windows line ends too
    result = cli_run("import", path, "--json")
    assert json.loads(result.stdout) == {"imported": 3, "problems": []}
    assert export_ids(cli_run) == sorted([a["id"], b["id"], c["id"]])


def test_a_bom_inside_a_line_is_still_a_bad_line(project, cli_run, tmp_path):
    a = make_record()
    path = tmp_path / "mid.jsonl"
    path.write_bytes(b'{"v":1,' + BOM + jsonl(a).encode()[7:])
    out = json.loads(cli_run("import", path, "--json").stdout)
    assert out["imported"] == 0 and out["problems"][0].startswith("line 1: invalid JSON")


def add_bom(path: Path, **settings) -> None:
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.update(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(BOM + json.dumps(data, indent=2).encode())


def actor_of_new_memory(cli_run) -> str:
    assert cli_run("remember", "--type", "semantic", "--content", "x").exit_code == 0
    [m] = json.loads(cli_run("list", "--json").stdout)
    return m["current"]["provenance"]["actor"]


def test_project_config_with_bom(project, cli_run):
    add_bom(project / ".ynm" / "config.json", actor="agent:project-bom")
    result = cli_run("status", "--json")
    assert result.exit_code == 0, result.stderr
    assert actor_of_new_memory(cli_run) == "agent:project-bom"
    # init reads the file again to keep its keys
    assert cli_run("init").exit_code == 0
    assert json.loads((project / ".ynm" / "config.json").read_text(encoding="utf-8-sig"))[
        "actor"] == "agent:project-bom"


def test_user_config_with_bom(project, cli_run, ynm_home):
    add_bom(ynm_home / "config.json", actor="agent:user-bom")
    assert actor_of_new_memory(cli_run) == "agent:user-bom"


def test_local_config_with_bom(project, cli_run):
    add_bom(project / ".ynm" / "config.local.json", actor="agent:local-bom")
    assert actor_of_new_memory(cli_run) == "agent:local-bom"


def test_env_file_with_bom(tmp_path):
    path = tmp_path / "env"
    path.write_bytes(BOM + b"FIRST=one\nSECOND=two\n")
    assert read_env_file(path) == {"FIRST": "one", "SECOND": "two"}


def test_client_settings_with_bom(project, cli_run):
    add_bom(project / ".mcp.json", mcpServers={"other": {"command": "other"}})
    result = cli_run("init", "--client", "claude-code", "--json")
    assert result.exit_code == 0, result.stderr
    servers = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert set(servers) == {"other", "ynm"}


def test_hook_payload_with_bom():
    body = {"session_id": "s1", "hook_event_name": "Stop"}
    assert read_payload(io.BytesIO(BOM + json.dumps(body).encode())) == body
    assert read_payload(io.StringIO("\ufeff" + json.dumps(body))) == body


# UTF-16 and UTF-32 files (Windows editors save them with a byte order mark) are named as such,
# not read as one line of garbage.
OTHER_ENCODINGS = [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")]


def _with_bom(text: str, codec: str) -> bytes:
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    return data


@pytest.mark.parametrize(("codec", "name"), OTHER_ENCODINGS)
def test_an_import_file_in_another_encoding_is_named(project, cli_run, tmp_path, codec, name):
    path = tmp_path / "team.jsonl"
    path.write_bytes(_with_bom(jsonl(make_record()), codec))
    result = cli_run("import", path)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error: invalid input: input: {path} is {name} text (it starts with a byte order "
        f"mark); ynm reads UTF-8: convert it, e.g. iconv -f {name} -t UTF-8")
    stdin = cli_run("import", input=_with_bom(jsonl(make_record()), codec))
    assert stdin.exit_code == 2 and "standard input is " + name in stdin.stderr


@pytest.mark.parametrize(("codec", "name"), OTHER_ENCODINGS)
def test_a_content_file_in_another_encoding_is_named(project, cli_run, tmp_path, codec, name):
    path = tmp_path / "note.md"
    path.write_bytes(_with_bom("Deploys go out on Tuesdays", codec))
    result = cli_run("remember", "--type", "semantic", "--content-file", path)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error: invalid input: content: --content-file is {name} text (it starts with a byte "
        f"order mark); ynm reads UTF-8: convert it, e.g. iconv -f {name} -t UTF-8")
