"""wire_frames.py -- the frames of docs/wire-protocol.md as the test ranks
(mute_rank.py, liar_rank.py) speak them: a 20-byte header ("CSIM", version,
type, flags, metadata length, data length), then the metadata and data."""
import struct

VERSION = 4
HELLO, WELCOME, PEER, EVENT, ABORT, FLUSH, FLUSHED, BYE, ALIVE = 1, 2, 3, 9, 10, 11, 12, 13, 20


def frame(t, meta=b""):
    return b"CSIM" + struct.pack("<BBHIQ", VERSION, t, 0, len(meta), 0) + meta


def read_exact(s, n):
    b = b""
    while len(b) < n:
        d = s.recv(n - len(b))
        if not d:
            raise EOFError
        b += d
    return b


def read_frame(s):
    """(type, metadata and data) of the next frame on socket s."""
    h = read_exact(s, 20)
    _, _, t, _, mlen, dlen = struct.unpack("<4sBBHIQ", h)
    return t, read_exact(s, mlen + dlen)
