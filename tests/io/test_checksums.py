"""The array-file checksum: its form, and that every single-byte change of a file is detected."""

import zlib

import numpy as np

from rlsi.io.checksums import bytes_digest, digest_matches, file_digest


def test_digest_form_and_value(tmp_path):
    path = tmp_path / "a.bin"
    data = b"rlsi" * 1000
    path.write_bytes(data)
    assert file_digest(path) == f"crc32:{zlib.crc32(data):08x}" == bytes_digest(data)
    # chunked reading gives the digest of the whole file
    assert file_digest(path, chunk_bytes=7) == file_digest(path)


def test_every_flipped_byte_is_detected(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(64, dtype=np.float64))
    expected = file_digest(path)
    raw = bytearray(path.read_bytes())
    for pos in range(0, len(raw), 3):
        damaged = bytearray(raw)
        damaged[pos] ^= 1 << (pos % 8)
        path.write_bytes(bytes(damaged))
        assert not digest_matches(path, expected), pos
    path.write_bytes(bytes(raw))
    assert digest_matches(path, expected)
    assert not digest_matches(path, None)
