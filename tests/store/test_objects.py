"""Loose blobs written by ynm (ynm/store/objects.py) are what git itself would store, also when
an append reuses the deflated prefix of the blob it extends."""

from __future__ import annotations

import json
import random
import subprocess
import zlib
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ynm.store.objects import (
    WINDOW,
    LooseMark,
    adler32_combine,
    adler32_of_tail,
    deflate_content,
    extend_deflated,
    mark_loose,
    read_appended_loose,
    read_deflated_loose,
    write_appended_blob,
    write_blob,
)


def _repo(tmp_path: Path) -> tuple[Path, pygit2.Repository, Path]:
    """A new repository made by the real ``git init``: its folder, itself, its objects folder."""
    repo_path = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo_path)], check=True)
    return repo_path, pygit2.Repository(str(repo_path)), repo_path / ".git" / "objects"


def test_blob_id_and_content_match_git(tmp_path: Path) -> None:
    repo_path, repo, objects = _repo(tmp_path)
    data = ("{\"v\":1}\n" * 5000 + "é\n").encode()
    oid = write_blob(repo, objects, data)
    expected = subprocess.run(["git", "hash-object", "--stdin"], input=data, check=True,
                              capture_output=True).stdout.decode().strip()
    assert str(oid) == expected
    shown = subprocess.run(["git", "-C", str(repo_path), "cat-file", "blob", expected],
                           check=True, capture_output=True).stdout
    assert shown == data
    assert repo[oid].data == data
    # writing it again leaves the object alone and gives the same id
    assert write_blob(repo, objects, data) == oid
    fsck = subprocess.run(["git", "-C", str(repo_path), "fsck", "--strict"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


# ----------------------------------------------------------------- appends reuse the deflated prefix


@given(st.binary(max_size=3000), st.binary(max_size=3000))
@settings(max_examples=200, deadline=None)
def test_adler32_combine_equals_adler32_of_the_concatenation(a: bytes, b: bytes) -> None:
    assert adler32_combine(zlib.adler32(a), zlib.adler32(b), len(b)) == zlib.adler32(a + b)


@given(st.binary(max_size=3000), st.binary(max_size=70_000))
@settings(max_examples=100, deadline=None)
def test_adler32_of_tail_inverts_the_combination(a: bytes, b: bytes) -> None:
    assert adler32_of_tail(zlib.adler32(a + b), zlib.adler32(a), len(b)) == zlib.adler32(b)


def test_adler32_combine_with_long_second_part() -> None:
    # len2 beyond 65521 exercises the modular reduction of the length.
    a, b = b"\xff" * 70_000, bytes(range(256)) * 600
    assert adler32_combine(zlib.adler32(a), zlib.adler32(b), len(b)) == zlib.adler32(a + b)


@given(st.lists(st.binary(max_size=5000), min_size=1, max_size=8))
@settings(max_examples=100, deadline=None)
def test_extended_pieces_inflate_to_the_whole_content(parts: list[bytes]) -> None:
    deflated = deflate_content(parts[0])
    content = parts[0]
    for extra in parts[1:]:
        deflated = extend_deflated(deflated, content, extra)
        content += extra
    assert deflated.size == len(content)
    assert deflated.adler == zlib.adler32(content)
    inflater = zlib.decompressobj(-15)
    assert inflater.decompress(deflated.body + b"\x03\x00") == content
    assert inflater.eof


def _lines(rng: random.Random, n: int) -> bytes:
    words = ["cache", "shard", "recall", "append", "git", "notes", "é", "ü", "sqlite"]
    return b"".join(
        json.dumps({"id": str(rng.randrange(10**9)),
                    "content": " ".join(rng.choices(words, k=rng.randrange(1, 40)))},
                   ensure_ascii=False).encode() + b"\n" for _ in range(n))


def test_appended_blobs_are_the_objects_git_itself_would_store(tmp_path: Path) -> None:
    """Cold start, small and large appends (past the 32 KiB window), a separator byte: every
    object has git's id, git and libgit2 read the exact bytes, and fsck --strict passes."""
    repo_path, repo, objects = _repo(tmp_path)
    rng = random.Random(7)
    content = _lines(rng, 300)
    oid, deflated = write_appended_blob(repo, objects, content, None)
    ids = [str(oid)]
    for extra in [_lines(rng, 1), b"\n" + _lines(rng, 2), _lines(rng, 900), content[:5000],
                  _lines(rng, 1)]:
        content += extra
        oid, deflated = write_appended_blob(repo, objects, content, deflated)
        assert deflated is not None and deflated.size == len(content)
        expected = subprocess.run(["git", "hash-object", "--stdin"], input=content, check=True,
                                  capture_output=True).stdout.decode().strip()
        assert str(oid) == expected
        shown = subprocess.run(["git", "-C", str(repo_path), "cat-file", "blob", expected],
                               check=True, capture_output=True).stdout
        assert shown == content
        assert pygit2.Repository(str(repo_path))[oid].data == content
        ids.append(str(oid))
    # The file on disk is the stitched stream: zlib header first, empty final block and the
    # Adler-32 of header plus content last.
    raw = (objects / ids[-1][:2] / ids[-1][2:]).read_bytes()
    header = b"blob %d\0" % len(content)
    assert raw[:2] == b"\x78\x01"
    assert raw[-6:] == b"\x03\x00" + zlib.adler32(header + content).to_bytes(4, "big")
    assert zlib.decompress(raw) == header + content
    fsck = subprocess.run(["git", "-C", str(repo_path), "fsck", "--strict", "--full"],
                          capture_output=True, check=False)
    assert fsck.returncode == 0, fsck.stderr
    # git packs them (and deltifies one against another) like any other blob.
    subprocess.run(["git", "-C", str(repo_path), "repack", "-adq"], check=True)
    for blob in ids[-2:]:
        subprocess.run(["git", "-C", str(repo_path), "cat-file", "-e", blob], check=True)


def test_prefix_longer_than_the_blob_is_refused(tmp_path: Path) -> None:
    _, repo, objects = _repo(tmp_path)
    base = deflate_content(b"abc\n" * 10)
    with pytest.raises(ValueError):
        write_appended_blob(repo, objects, b"abc\n", base)


def test_a_new_process_recovers_the_deflated_prefix_from_the_loose_file(tmp_path: Path) -> None:
    """Only a loose object in ynm's stitched layout is reused; git's own loose object, a
    packed object, a missing one and a file whose id does not match give None."""
    repo_path, repo, objects = _repo(tmp_path)
    rng = random.Random(3)
    content = _lines(rng, 200)
    oid, _ = write_appended_blob(repo, objects, content, None)
    content2 = content + _lines(rng, 3)
    oid2, deflated2 = write_appended_blob(repo, objects, content2, deflate_content(content))
    loaded = read_deflated_loose(objects, str(oid2))
    assert loaded is not None
    data, recovered = loaded
    assert data == content2
    assert recovered == deflated2
    # It extends like the in-memory form does.
    content3 = content2 + _lines(rng, 1)
    oid3, _ = write_appended_blob(repo, objects, content3, recovered)
    assert subprocess.run(["git", "-C", str(repo_path), "cat-file", "blob", str(oid3)],
                          check=True, capture_output=True).stdout == content3
    # A file under another id (copied) fails the hash check.
    fake = "0" * 40
    (objects / "00").mkdir(exist_ok=True)
    (objects / "00" / fake[2:]).write_bytes((objects / str(oid2)[:2] / str(oid2)[2:]).read_bytes())
    assert read_deflated_loose(objects, fake) is None
    # git's own loose object of the same bytes is not in the stitched layout.
    path = objects / str(oid)[:2] / str(oid)[2:]
    path.unlink()
    written = subprocess.run(["git", "-C", str(repo_path), "hash-object", "-w", "--stdin"],
                             input=content, check=True, capture_output=True).stdout.decode()
    assert written.strip() == str(oid)
    assert zlib.decompress(path.read_bytes()) == b"blob %d\0" % len(content) + content
    assert read_deflated_loose(objects, str(oid)) is None
    # Packed: no loose file.
    subprocess.run(["git", "-C", str(repo_path), "add", "-A"], check=True, capture_output=True)
    tree = subprocess.run(["git", "-C", str(repo_path), "mktree"], check=True,
                          capture_output=True, input=f"100644 blob {oid3}\tx\n".encode()
                          ).stdout.decode().strip()
    subprocess.run(["git", "-C", str(repo_path), "update-ref", "refs/t", tree], check=True)
    subprocess.run(["git", "-C", str(repo_path), "repack", "-adq"], check=True)
    subprocess.run(["git", "-C", str(repo_path), "prune-packed"], check=True)
    assert read_deflated_loose(objects, str(oid3)) is None
    assert read_deflated_loose(objects, "1" * 40) is None


# ------------------------------------------------------ a reader inflates only what was appended


def _loose(objects: Path, oid: pygit2.Oid) -> bytes:
    return (objects / str(oid)[:2] / str(oid)[2:]).read_bytes()


def test_appended_parts_are_read_from_the_loose_file_alone(tmp_path: Path) -> None:
    """Blobs of 40 KiB and more (past the 32 KiB window), extended once and then twice
    between two reads: each read gives exactly the bytes appended, and a mark equal to the one
    taken from the whole content."""
    _, repo, objects = _repo(tmp_path)
    rng = random.Random(5)
    content = _lines(rng, 400)
    assert len(content) > WINDOW
    oid, deflated = write_appended_blob(repo, objects, content, None)
    mark = mark_loose(_loose(objects, oid), content)
    assert mark is not None and (mark.size, mark.window) == (len(content), content[-WINDOW:])
    for steps in (1, 2, 1):
        old, old_mark = content, mark
        for _ in range(steps):
            content = content + _lines(rng, 7)
            oid, deflated = write_appended_blob(repo, objects, content, deflated)
        got = read_appended_loose(_loose(objects, oid), old_mark)
        assert got is not None
        tail, mark = got
        assert tail == content[len(old):]
        assert mark == mark_loose(_loose(objects, oid), content)


def test_a_small_first_blob_is_its_own_window(tmp_path: Path) -> None:
    _, repo, objects = _repo(tmp_path)
    content = b'{"a":1}\n'
    oid, deflated = write_appended_blob(repo, objects, content, None)
    mark = mark_loose(_loose(objects, oid), content)
    assert mark is not None and mark.window == content
    oid2, _ = write_appended_blob(repo, objects, content + b'{"a":1}\n', deflated)
    got = read_appended_loose(_loose(objects, oid2), mark)
    assert got is not None and got[0] == b'{"a":1}\n'


def test_anything_but_an_append_of_the_same_deflated_bytes_is_refused(tmp_path: Path) -> None:
    """git's own loose object, the same content deflated whole, a wrong window, a wrong
    length or CRC of the old deflated bytes, and a mark of other content all give None."""
    repo_path, repo, objects = _repo(tmp_path)
    rng = random.Random(9)
    content = _lines(rng, 300)
    oid, deflated = write_appended_blob(repo, objects, content, None)
    mark = mark_loose(_loose(objects, oid), content)
    assert mark is not None
    assert mark_loose(_loose(objects, oid), content + b"x") is None  # not its content
    content2 = content + _lines(rng, 5)
    oid2, _ = write_appended_blob(repo, objects, content2, deflated)
    raw2 = _loose(objects, oid2)
    assert read_appended_loose(raw2, mark) is not None
    for bad in (
        LooseMark(mark.size, mark.adler, mark.body, mark.body_crc, bytes(len(mark.window))),
        LooseMark(mark.size, mark.adler, mark.body - 1, mark.body_crc, mark.window),
        LooseMark(mark.size, mark.adler, mark.body, mark.body_crc ^ 1, mark.window),
        LooseMark(mark.size, mark.adler ^ 1, mark.body, mark.body_crc, mark.window),
        LooseMark(mark.size + 1, mark.adler, mark.body, mark.body_crc, mark.window),
    ):
        assert read_appended_loose(raw2, bad) is None, bad
    # The same content deflated whole: a valid file in the same layout, other deflated bytes.
    whole = repo_path / "whole"
    subprocess.run(["git", "init", "-q", str(whole)], check=True)
    oid_w, _ = write_appended_blob(pygit2.Repository(str(whole)), whole / ".git" / "objects",
                                   content2, None)
    assert oid_w == oid2
    raw_w = _loose(whole / ".git" / "objects", oid_w)
    assert raw_w != raw2 and mark_loose(raw_w, content2) is not None
    assert read_appended_loose(raw_w, mark) is None
    # git's own loose object of the appended content.
    path = objects / str(oid2)[:2] / str(oid2)[2:]
    path.unlink()
    subprocess.run(["git", "-C", str(repo_path), "hash-object", "-w", "--stdin"],
                   input=content2, check=True, capture_output=True)
    assert mark_loose(path.read_bytes(), content2) is None
    assert read_appended_loose(path.read_bytes(), mark) is None
