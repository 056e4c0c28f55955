"""``ynm import`` of compressed input (docs/cli.md "ynm import"): gzip is read as it comes,
told by its magic bytes (not the file name), from a file or standard input; zstd, xz, bzip2
and zip are refused before any record is read, naming the format and the command that
decompresses it. Every compressed file is made in the test by the real compressor."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import ynm

from .conftest import jsonl, make_record


def export_ids(cli_run) -> list[str]:
    return sorted(json.loads(line)["id"] for line in cli_run("export").stdout.splitlines())


@pytest.fixture
def records():
    return [make_record(content=f"Deploy step {n}", summary=f"Deploy step {n}")
            for n in range(3)]


@pytest.mark.parametrize("name", ["team.jsonl.gz", "team.jsonl", "team.txt"])
def test_a_gzip_file_imports_whatever_its_name(project, cli_run, tmp_path, records, name):
    path = tmp_path / name
    path.write_bytes(gzip.compress(jsonl(*records).encode()))
    result = cli_run("import", path, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"imported": 3, "problems": []}
    assert export_ids(cli_run) == sorted(r["id"] for r in records)


def test_gzip_on_standard_input_and_concatenated_members(project, cli_run, records):
    data = (gzip.compress(jsonl(records[0]).encode())
            + gzip.compress(jsonl(*records[1:]).encode()))  # as `cat a.gz b.gz` makes
    result = cli_run("import", "-", input=data)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "imported 3 record(s)\n"
    assert export_ids(cli_run) == sorted(r["id"] for r in records)


def test_gzip_through_a_real_pipe(project, tmp_path, records):
    env = {**os.environ, "PYTHONPATH": str(Path(ynm.__file__).parents[1])}
    proc = subprocess.run([sys.executable, "-m", "ynm.cli", "import", "--json"],
                          input=gzip.compress(jsonl(*records).encode()), cwd=project, env=env,
                          capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"imported": 3, "problems": []}


def test_a_gzip_file_cut_short_says_so_in_one_line(project, cli_run, tmp_path, records):
    whole = gzip.compress(jsonl(*records).encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[:len(whole) - 12])
    result = cli_run("import", path)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error: invalid input: input: {path}: the gzip data is damaged or cut short (")
    assert result.stderr.endswith("hint: nothing was imported; import a whole copy\n")
    assert "invalid JSON" not in result.stderr and export_ids(cli_run) == []


def zstd(data: bytes) -> bytes:
    if shutil.which("zstd") is None:  # pragma: no cover
        pytest.skip("zstd not installed")
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True,
                          check=True).stdout


def zipped(data: bytes) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("team.jsonl", data)
    return buffer.getvalue()


@pytest.mark.parametrize(("compress", "name", "command"), [
    (zstd, "zstd", "unzstd -c"), (lzma.compress, "xz", "unxz -c"),
    (bz2.compress, "bzip2", "bunzip2 -c"), (zipped, "zip", "unzip -p"),
])
def test_other_compression_is_refused_at_once(project, cli_run, tmp_path, records, compress,
                                              name, command):
    data = compress(jsonl(*records).encode())
    path = tmp_path / "team.jsonl"  # the name says nothing: the bytes do
    path.write_bytes(data)
    before = export_ids(cli_run)
    result = cli_run("import", path)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"Error: invalid input: input: {path} is {name}-compressed; ynm import reads JSONL, "
        f"plain or gzip\nhint: decompress it first: {command} {path} | ynm import -; "
        "nothing was imported\n")
    assert export_ids(cli_run) == before == []
    # and from standard input
    result = cli_run("import", input=data)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: invalid input: input: standard input is {name}-compressed; ynm import reads "
        f"JSONL, plain or gzip\nhint: decompress it first: <command> | {command} | ynm "
        "import -; nothing was imported\n")
    # decompressed as the hint says, it imports
    if name == "zstd":
        plain = subprocess.run(["unzstd", "-c", str(path)], capture_output=True,
                               check=True).stdout
        assert json.loads(cli_run("import", "--json", input=plain).stdout)["imported"] == 3


def test_plain_and_short_inputs_still_import(project, cli_run, records):
    assert cli_run("import", "--json", input=jsonl(records[0])).exit_code == 0
    result = cli_run("import", input=b"{")  # fewer bytes than any magic number
    assert result.exit_code == 2 and "line 1" in result.stderr
    assert cli_run("import", input=b"").stderr == "nothing to import (standard input: empty)\n"
