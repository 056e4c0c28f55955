"""Writing a blob as a loose object, compressed at git's own default level for loose objects.

libgit2 compresses loose objects at zlib level 6; git writes them at ``core.looseCompression``
(default 1, best speed). For a shard of several megabytes, rewritten on every append, that is
the difference between ~90 ms and ~40 ms. Both produce a valid zlib stream that every git reads.
Repositories using SHA-256 object ids are left to libgit2.

An append only adds lines at the end of a shard blob, so :func:`write_appended_blob` does not
compress the unchanged prefix again. A loose object is ``zlib("blob <size>\\0" + content)``; we
write it as a zlib stream made of byte-aligned pieces (RFC 1950/1951): the header deflated and
sync-flushed, then the content's pieces (each a run of non-final deflate blocks ending in a sync
flush; each appended piece is compressed with the previous 32 KiB of content as its dictionary,
so back-references reach into the prefix as in any deflate stream), then an empty final block and
the Adler-32 of everything. The deflated content of the old blob is kept in memory
(:class:`DeflatedContent`) and reused byte for byte; the Adler-32 is combined arithmetically.
A new process recovers it from the loose file itself (:func:`read_deflated_loose`).
A reader that has seen one version of such a blob keeps a :class:`LooseMark` of it and reads a
later, appended version by inflating only what follows the reused body
(:func:`read_appended_loose`).
What is left per append is the SHA-1 of the whole object (the object id covers every byte: the
floor of the format), deflating the new lines, and writing the file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from ynm.store.libgit import pygit2

LOOSE_COMPRESSION_LEVEL = 1  # git's core.looseCompression default (Z_BEST_SPEED)
WINDOW = 32 * 1024  # deflate's window: how far back a match may reach
_ADLER_BASE = 65521
# zlib header for deflate with a 32 KiB window and "fastest" level (0x7801 % 31 == 0).
_ZLIB_HEADER = b"\x78\x01"
# A final, empty fixed-Huffman block: ends a stream whose last piece was sync-flushed.
_FINAL_EMPTY_BLOCK = b"\x03\x00"
# How a sync flush ends: an empty stored block (LEN 0, NLEN 0xFFFF) on a byte boundary.
_SYNC_MARK = b"\x00\x00\xff\xff"


@dataclass(frozen=True, slots=True)
class DeflatedContent:
    """A blob's content as raw deflate pieces, reusable as the prefix of a longer blob.

    Attributes:
        size: Length in bytes of the content.
        adler: Adler-32 of the content alone (no object header).
        body: Raw deflate data (RFC 1951) of the content: non-final blocks only, ending in a
            sync flush, so more blocks may follow it.
        crc: CRC-32 of ``body`` (what a reader's :class:`LooseMark` checks), extended piece
            by piece like the body.
    """

    size: int
    adler: int
    body: bytes
    crc: int

    def mark(self, content: bytes) -> LooseMark:
        """The :class:`LooseMark` of a loose file written from this form of ``content``."""
        return LooseMark(self.size, self.adler, len(self.body), self.crc, content[-WINDOW:])


def adler32_combine(adler1: int, adler2: int, len2: int) -> int:
    """The Adler-32 of ``a + b`` from ``adler32(a)``, ``adler32(b)`` and ``len(b)``.

    The same arithmetic as zlib's ``adler32_combine`` (RFC 1950 §8: s1 sums bytes plus one, s2
    sums the running s1 values, both modulo 65521).
    """
    rem = len2 % _ADLER_BASE
    a1, b1 = adler1 & 0xFFFF, (adler1 >> 16) & 0xFFFF
    a2, b2 = adler2 & 0xFFFF, (adler2 >> 16) & 0xFFFF
    s1 = (a1 + a2 - 1) % _ADLER_BASE
    s2 = (rem * a1 + b1 + b2 - rem) % _ADLER_BASE
    return s1 | (s2 << 16)


def adler32_of_tail(whole: int, head_adler: int, tail_len: int) -> int:
    """The Adler-32 of ``b`` from ``adler32(a + b)``, ``adler32(a)`` and ``len(b)``: the
    combination of :func:`adler32_combine` solved for the second part."""
    rem = tail_len % _ADLER_BASE
    s1, s2 = whole & 0xFFFF, (whole >> 16) & 0xFFFF
    a1, b1 = head_adler & 0xFFFF, (head_adler >> 16) & 0xFFFF
    a2 = (s1 - a1 + 1) % _ADLER_BASE
    b2 = (s2 - rem * a1 - b1 + rem) % _ADLER_BASE
    return a2 | (b2 << 16)


def _deflate_piece(data: bytes, dictionary: bytes = b"") -> bytes:
    """Raw deflate of ``data`` ending in a sync flush (byte-aligned, not final)."""
    if dictionary:
        packer = zlib.compressobj(LOOSE_COMPRESSION_LEVEL, zlib.DEFLATED, -15,
                                  zdict=dictionary)
    else:
        packer = zlib.compressobj(LOOSE_COMPRESSION_LEVEL, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush(zlib.Z_SYNC_FLUSH)


def deflate_content(data: bytes) -> DeflatedContent:
    """The :class:`DeflatedContent` of ``data``, compressed whole (no prefix to reuse)."""
    body = _deflate_piece(data)
    return DeflatedContent(len(data), zlib.adler32(data), body, zlib.crc32(body))


def extend_deflated(base: DeflatedContent, prefix_tail: bytes, extra: bytes) -> DeflatedContent:
    """``base`` (the content so far) followed by ``extra``, deflating only ``extra``.

    Args:
        base: The deflated content the new bytes follow.
        prefix_tail: The last bytes of that content (up to 32 KiB are used as the dictionary).
        extra: The bytes appended.
    """
    if not extra:
        return base
    piece = _deflate_piece(extra, prefix_tail[-WINDOW:])
    adler = adler32_combine(base.adler, zlib.adler32(extra), len(extra))
    return DeflatedContent(base.size + len(extra), adler, base.body + piece,
                           zlib.crc32(piece, base.crc))


def read_deflated_loose(objects_dir: Path, blob_hex: str) -> tuple[bytes, DeflatedContent] | None:
    """A blob's content and its reusable deflated form, read back from a loose object that
    :func:`write_appended_blob` wrote (so a new process can append without deflating it all).

    The file must be exactly that layout: zlib header, the deflated object header ending in a
    sync flush, content pieces ending in a sync flush, an empty final block and the Adler-32.
    It is inflated once and checked in full: the inflated bytes must be ``blob <size>\0`` plus
    the content and hash to ``blob_hex``, and the stream must end exactly there.

    Returns:
        (content, deflated content), or None when the object is not loose (packed), missing,
        written by another writer (git, libgit2) or fails any check; the caller then reads the
        blob through libgit2 and deflates it whole.
    """
    path = objects_dir / blob_hex[:2] / blob_hex[2:]
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    split = _split_loose(raw)
    if split is None:
        return None
    header, start = split
    inflater = zlib.decompressobj()
    try:
        full = inflater.decompress(raw)
    except zlib.error:
        return None
    if not inflater.eof or inflater.unused_data or inflater.unconsumed_tail:
        return None
    content = full[len(header):]
    if header != b"blob %d\0" % len(content):
        return None
    body = raw[start:-6]
    if not body.endswith(_SYNC_MARK):
        return None
    if hashlib.sha1(full).hexdigest() != blob_hex:
        return None
    # The inflater has checked the trailer against the bytes, so the content's own Adler-32
    # can be taken from it without a second pass.
    adler = adler32_of_tail(int.from_bytes(raw[-4:], "big"), zlib.adler32(header), len(content))
    return content, DeflatedContent(len(content), adler, body, zlib.crc32(body))


@dataclass(frozen=True, slots=True)
class LooseMark:
    """What a reader keeps of a blob seen in a loose file this module wrote, so that a later
    version that appends to it can be read from its own loose file by inflating only the
    appended part (:func:`read_appended_loose`).

    Attributes:
        size: Length in bytes of the content.
        adler: Adler-32 of the content (no object header).
        body: Length in bytes of the deflated content in the file: what lies between the
            deflated object header and the final empty block.
        body_crc: CRC-32 of those deflated bytes.
        window: The last :data:`WINDOW` bytes of the content (all of it when shorter): the
            dictionary an appended piece is compressed with (:func:`extend_deflated`).
    """

    size: int
    adler: int
    body: int
    body_crc: int
    window: bytes


def _split_loose(raw: bytes) -> tuple[bytes, int] | None:
    """The object header (``blob <size>\0``) of a loose file in the layout written here and
    the offset where its deflated content starts, or None when the file has another layout
    (its header not a piece of its own ending in a sync flush, or no final empty block)."""
    if len(raw) < 12 or raw[:2] != _ZLIB_HEADER or raw[-6:-4] != _FINAL_EMPTY_BLOCK:
        return None
    try:
        head = zlib.decompressobj(-15).decompress(raw[2:66], 32)
    except zlib.error:
        return None
    nul = head.find(b"\0")
    digits = head[5:nul]
    if nul < 0 or not head.startswith(b"blob ") or not digits.isdigit():
        return None
    header = head[:nul + 1]
    if header != b"blob %d\0" % int(digits):
        return None
    head_piece = _deflate_piece(header)
    start = 2 + len(head_piece)
    if raw[2:start] != head_piece:
        return None
    return header, start


def mark_loose(raw: bytes, content: bytes) -> LooseMark | None:
    """The :class:`LooseMark` of ``content``, the blob stored in the loose file ``raw``.

    Checks the layout :func:`write_appended_blob` writes (zlib header, the object header as a
    sync-flushed piece of its own, content ending in a sync flush, an empty final block) and
    that the file's Adler-32 trailer is the one of the object header plus ``content``; the
    deflated content is not inflated (the caller read ``content`` already, by the object id).

    Returns:
        The mark, or None when the file has another layout (written by git, libgit2 or another
        tool) or does not hold ``content``.
    """
    split = _split_loose(raw)
    if split is None:
        return None
    header, start = split
    if header != b"blob %d\0" % len(content):
        return None
    body = memoryview(raw)[start:-6]
    if body[-4:] != _SYNC_MARK:
        return None
    adler = zlib.adler32(content)
    if adler32_combine(zlib.adler32(header), adler, len(content)) != int.from_bytes(raw[-4:], "big"):
        return None
    return LooseMark(len(content), adler, len(body), zlib.crc32(body), content[-WINDOW:])


def read_appended_loose(raw: bytes, old: LooseMark) -> tuple[bytes, LooseMark] | None:
    """What a blob adds to an older one, read from its loose file ``raw`` by inflating only
    the added part.

    The file must be in the layout written here and its deflated content must begin with
    exactly the old blob's deflated content (same length, same CRC-32 of the compressed
    bytes): the same compressed bytes inflate to the same content, and since they end on a
    sync flush with non-final blocks only, the rest is inflated alone with ``old.window`` as
    its dictionary (RFC 1951 §3.2: back-references reach at most 32 KiB back). The bytes
    inflated must be exactly the length the object header gives past ``old.size``, and the
    Adler-32 of the whole object, combined from ``old.adler`` and theirs, must equal the
    file's trailer.

    Args:
        raw: The new blob's loose file (still compressed).
        old: The mark of the blob it should extend.

    Returns:
        (the content past ``old.size``, the new blob's mark), or None when any check fails
        (another layout, another compression of the same content, not an append of ``old``):
        the caller then reads the whole blob.
    """
    split = _split_loose(raw)
    if split is None:
        return None
    header, start = split
    size = int(header[5:-1])
    end = start + old.body
    if size <= old.size or end > len(raw) - 6:
        return None
    view = memoryview(raw)
    if zlib.crc32(view[start:end]) != old.body_crc:
        return None
    rest = view[end:-6]
    if rest[-4:] != _SYNC_MARK:
        return None
    if old.window:
        inflater = zlib.decompressobj(-15, zdict=old.window)
    else:
        inflater = zlib.decompressobj(-15)
    want = size - old.size
    try:
        tail = inflater.decompress(rest, want + 1)
    except zlib.error:
        return None
    if inflater.eof or inflater.unconsumed_tail or len(tail) != want:
        return None
    adler = adler32_combine(old.adler, zlib.adler32(tail), want)
    if adler32_combine(zlib.adler32(header), adler, size) != int.from_bytes(raw[-4:], "big"):
        return None
    window = (old.window + tail)[-WINDOW:]
    return tail, LooseMark(size, adler, old.body + len(rest), zlib.crc32(rest, old.body_crc),
                           window)


def _is_sha1(repo: pygit2.Repository) -> bool:
    try:
        fmt = repo.config["extensions.objectformat"]
    except KeyError:
        return True
    return str(fmt).lower() == "sha1"


def _store_loose(folder: Path, path: Path, chunks: list[bytes]) -> None:
    """Write an object file atomically: a temporary file in its fan-out folder, moved in."""
    folder.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(chunks)
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_blob(repo: pygit2.Repository, objects_dir: Path, data: bytes) -> pygit2.Oid:
    """Store ``data`` as a blob and return its id (the same id git and libgit2 compute).

    The object is written to a temporary file in its fan-out folder and moved into place, so
    a reader never sees half an object; an object already present is not rewritten.
    """
    if not _is_sha1(repo):
        return repo.create_blob(data)
    header = b"blob %d\0" % len(data)
    digest = hashlib.sha1(header)
    digest.update(data)
    hex_id = digest.hexdigest()
    folder = objects_dir / hex_id[:2]
    path = folder / hex_id[2:]
    if not path.exists():
        packer = zlib.compressobj(LOOSE_COMPRESSION_LEVEL)
        body = packer.compress(header) + packer.compress(data) + packer.flush()
        _store_loose(folder, path, [body])
    return pygit2.Oid(hex=hex_id)


def write_appended_blob(
    repo: pygit2.Repository,
    objects_dir: Path,
    content: bytes,
    base: DeflatedContent | None,
) -> tuple[pygit2.Oid, DeflatedContent | None]:
    """Store ``content`` as a blob, reusing the deflated form of a prefix of it.

    Args:
        repo: The repository (SHA-256 repositories go through libgit2 whole).
        objects_dir: Its ``objects`` folder.
        content: The complete new blob.
        base: The deflated form of ``content[:base.size]`` (the blob it extends), or None to
            deflate everything.

    Returns:
        (blob id, the deflated form of ``content`` to pass as ``base`` next time; None for a
        SHA-256 repository). The id is the one git computes; the file is a valid zlib stream
        that git, libgit2 and the reference read (see the module docstring).

    Raises:
        ValueError: ``base`` is longer than ``content``.
        OSError: The object file cannot be written.
    """
    if not _is_sha1(repo):
        return repo.create_blob(content), None
    if base is None:
        deflated = deflate_content(content)
    else:
        if base.size > len(content):
            raise ValueError("the deflated prefix is longer than the blob")
        start = base.size
        deflated = extend_deflated(base, content[max(0, start - WINDOW):start], content[start:])
    header = b"blob %d\0" % len(content)
    digest = hashlib.sha1(header)
    digest.update(content)
    hex_id = digest.hexdigest()
    folder = objects_dir / hex_id[:2]
    path = folder / hex_id[2:]
    if not path.exists():
        adler = adler32_combine(zlib.adler32(header), deflated.adler, deflated.size)
        _store_loose(folder, path, [_ZLIB_HEADER, _deflate_piece(header), deflated.body,
                                    _FINAL_EMPTY_BLOCK, adler.to_bytes(4, "big")])
    return pygit2.Oid(hex=hex_id), deflated
