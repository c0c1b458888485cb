#!/usr/bin/env python3
"""liar_rank.py PORT TOKEN RANK WORLD STATUS: joins the tcp job whose
controller listens on 127.0.0.1:PORT as the highest rank, as a rank process
would (HELLO, WELCOME, PEER to every lower rank; the frames of
docs/wire-protocol.md), then sends one well-formed EVENT: an error of its
own whose status is STATUS (one a run never ends with, for the test). It
answers the controller (ALIVE; BYE after ABORT) until the controller closes
its connection."""
import socket, struct, sys

VERSION = 3
HELLO, WELCOME, PEER, EVENT, ABORT, BYE, ALIVE = 1, 2, 3, 9, 10, 13, 20
EV_ERROR, HAS_TEXT = 10, 8
port, token, rank, world = int(sys.argv[1]), sys.argv[2].encode(), int(sys.argv[3]), int(sys.argv[4])
status = int(sys.argv[5])

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
    h = read_exact(s, 20)
    _, _, t, _, mlen, dlen = struct.unpack("<4sBBHIQ", h)
    return t, read_exact(s, mlen + dlen)

lis = socket.socket()
lis.bind(("127.0.0.1", 0))
lis.listen(1)
ctl = socket.create_connection(("127.0.0.1", port))
ctl.sendall(frame(HELLO, token + struct.pack("<IIIHH", rank, world, 0x7F000001,
                                             lis.getsockname()[1], 0)))
while True:
    t, meta = read_frame(ctl)
    if t == WELCOME:
        break
mesh = []
fixed = len(meta) - 6 * world  # the addresses close WELCOME: 6 bytes per rank
for j in range(rank):
    ip, p = struct.unpack_from("<IH", meta, fixed + 6 * j)
    m = socket.create_connection((socket.inet_ntoa(struct.pack(">I", ip)), p))
    m.sendall(frame(PEER, token + struct.pack("<II", rank, world)))
    mesh.append(m)
# The event's fixed 134 bytes (type, flags, rank, t, line, status, text
# length at their offsets), then its text.
text = b"liar.lua:1: an error with a status of its own"
ev = bytearray(134)
ev[0], ev[4] = EV_ERROR, HAS_TEXT
struct.pack_into("<i", ev, 5, rank)
struct.pack_into("<d", ev, 17, 0.001)
struct.pack_into("<i", ev, 85, 1)
struct.pack_into("<i", ev, 105, status)
struct.pack_into("<I", ev, 113, len(text))
ctl.sendall(frame(EVENT, bytes(ev) + text))
print("sent", flush=True)
ctl.settimeout(0.2)
while True:
    try:
        ctl.sendall(frame(ALIVE, struct.pack("<I", 0)))
        t, _ = read_frame(ctl)
    except socket.timeout:
        continue
    except (EOFError, OSError):
        break
    if t == ABORT:
        ctl.sendall(frame(BYE))
