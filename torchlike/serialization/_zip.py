"""The zip container of torch's checkpoint format: an aligned, uncompressed zip writer and the
record lookup ``torchlike.load`` needs on top of ``zipfile``.

PyTorch (>= 1.6) writes a checkpoint as a zip archive whose entries are stored uncompressed
under one top-level folder, with each entry's data starting at a multiple of 64 bytes (the
local header's extra field is padded with an ``FB`` record full of ``Z``), so a reader can map
storages straight from the file.  This writer produces the same layout, switching to zip64
fields only for entries, offsets or counts that do not fit the classic ones.
"""
import struct
import zlib
import zipfile

ALIGNMENT = 64
# Sizes/offsets from ZIP64_LIMIT and entry counts from ZIP64_COUNT_LIMIT on need zip64 fields
# (the classic fields then hold the 0xFFFFFFFF / 0xFFFF markers).
ZIP64_LIMIT = 0xFFFFFFFF
ZIP64_COUNT_LIMIT = 0xFFFF
_DOS_DATE = (1 << 5) | 1     # 1980-01-01, 00:00: a fixed timestamp keeps saves reproducible


class ZipWriter:
    """Writes stored (uncompressed), 64-byte-aligned entries to a binary stream.

    ``write(name, data)`` appends one entry (data: bytes or a C-contiguous buffer);
    ``close()`` writes the central directory.  Offsets count from where the stream stood when
    the writer was made, so the stream need not be seekable.
    """

    def __init__(self, stream):
        self._stream = stream
        self._pos = 0
        self._entries = []       # (name bytes, crc, size, local header offset)

    def _emit(self, b):
        self._stream.write(b)
        self._pos += len(b)

    def write(self, name, data):
        view = memoryview(data).cast("B")
        name_b = name.encode("ascii")
        size = view.nbytes
        crc = zlib.crc32(view) & 0xFFFFFFFF
        offset = self._pos
        zip64 = size >= ZIP64_LIMIT
        extra = struct.pack("<HHQQ", 1, 16, size, size) if zip64 else b""
        start = offset + 30 + len(name_b) + len(extra)
        pad = -(start + 4) % ALIGNMENT
        extra += struct.pack("<2sH", b"FB", pad) + b"Z" * pad
        stored = 0xFFFFFFFF if zip64 else size
        self._emit(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if zip64 else 20, 0, 0, 0,
                               _DOS_DATE, crc, stored, stored, len(name_b), len(extra)))
        self._emit(name_b)
        self._emit(extra)
        self._emit(view)
        self._entries.append((name_b, crc, size, offset))

    def close(self):
        cd_start = self._pos
        for name_b, crc, size, offset in self._entries:
            big = [v for v in (size, size, offset) if v >= ZIP64_LIMIT]
            extra = struct.pack(f"<HH{len(big)}Q", 1, 8 * len(big), *big) if big else b""
            version = 45 if big else 20
            size32, offset32 = (_marker(v, ZIP64_LIMIT, 0xFFFFFFFF) for v in (size, offset))
            self._emit(struct.pack(
                "<IHHHHHHIIIHHHHHII", 0x02014B50, version, version, 0, 0, 0, _DOS_DATE, crc,
                size32, size32, len(name_b), len(extra), 0, 0, 0, 0, offset32))
            self._emit(name_b)
            self._emit(extra)
        cd_size = self._pos - cd_start
        count = len(self._entries)
        if count >= ZIP64_COUNT_LIMIT or cd_size >= ZIP64_LIMIT or cd_start >= ZIP64_LIMIT:
            eocd64 = self._pos
            self._emit(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count,
                                   cd_size, cd_start))
            self._emit(struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1))
        count16 = _marker(count, ZIP64_COUNT_LIMIT, 0xFFFF)
        self._emit(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count16, count16,
                               _marker(cd_size, ZIP64_LIMIT, 0xFFFFFFFF),
                               _marker(cd_start, ZIP64_LIMIT, 0xFFFFFFFF), 0))


def _marker(value, limit, marker):
    """``value`` for a classic zip field, or the marker saying "see the zip64 field"."""
    return marker if value >= limit else value


def is_zip(f):
    """Whether the seekable stream ``f`` starts (at its current position) with a zip local
    header; the position is left unchanged."""
    start = f.tell()
    magic = f.read(4)
    f.seek(start)
    return magic == b"PK\x03\x04"


# The reading limits and messages of torch's checkpoint reader (its PyTorchStreamReader).
_CORRUPT = (" This is an internal miniz error. If you are seeing this error, there is a high "
            "likelihood that your checkpoint file is corrupted. This can happen if the "
            "checkpoint was not saved properly, was transferred incorrectly, or the file was "
            "modified after saving.")
MIN_VERSION, MAX_VERSION = 1, 10


class ZipReader:
    """The records of one checkpoint archive (``<folder>/data.pkl``, ``<folder>/data/0``, ...),
    read through ``zipfile``; with ``mapped`` (an ``mmap`` of the whole file), storages are
    sliced from the mapping instead of being read.  A damaged archive raises torch's
    RuntimeErrors, not ``zipfile.BadZipFile``."""

    def __init__(self, f, mapped=None):
        try:
            self._zip = zipfile.ZipFile(f)
        except zipfile.BadZipFile:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding "
                               "central directory." + _CORRUPT) from None
        self._mapped = mapped
        names = self._zip.namelist()
        if not names:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: the archive is "
                               "empty")
        first = names[0]
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self.prefix = first[:first.index("/") + 1]
        self._names = set(names)

    def has(self, name):
        return self.prefix + name in self._names

    def read(self, name, nbytes=None):
        """The bytes of record ``name`` (relative to the archive's folder); with ``nbytes``,
        the size it must have (a storage's)."""
        full = self.prefix + name
        if full not in self._names:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               "found." + _CORRUPT)
        info = self._zip.getinfo(full)
        if nbytes is not None and info.file_size != nbytes:
            raise RuntimeError(f"record size ({info.file_size} bytes) does not match expected "
                               f"size ({nbytes} bytes = {nbytes} elements * 1 bytes/element) "
                               "for dtype Byte")
        if self._mapped is not None and info.compress_type == zipfile.ZIP_STORED:
            data = memoryview(self._mapped)[self._data_offset(info):][:info.file_size]
            if len(data) != info.file_size:
                raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the "
                                   "archive ends inside it." + _CORRUPT)
            return data
        try:
            return self._zip.read(full)
        except (zipfile.BadZipFile, EOFError, zlib.error) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e}."
                               + _CORRUPT) from None

    def check_version(self):
        """torch's check of the archive's ``version`` record."""
        if not self.has("version"):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.')
        text = bytes(self.read("version")).decode("latin1").strip()
        try:
            version = int(text)
        except ValueError:
            raise RuntimeError(f"Couldn't parse the version {text} as Long Long.") from None
        if version < MIN_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the minimum "
                f"supported version for reading is {MIN_VERSION}. Your PyTorch script module "
                "file is too old. Please regenerate it with latest version of PyTorch to "
                "mitigate this issue.")
        if version > MAX_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the maximum "
                f"supported version for reading is {MAX_VERSION}. The version of your PyTorch "
                "installation may be too old, please upgrade PyTorch to latest version to "
                "mitigate this issue.")

    def _data_offset(self, info):
        header = self._mapped[info.header_offset:info.header_offset + 30]
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {info.filename}: no "
                               "local header where the directory says." + _CORRUPT)
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + 30 + name_len + extra_len

    def close(self):
        self._zip.close()
