#!/usr/bin/env python3
"""liar_rank.py PORT TOKEN WORLD MODE STATUS: joins the tcp job whose
controller listens on 127.0.0.1:PORT as its highest rank(s), as a rank
process would (HELLO, WELCOME, PEER to every lower rank; the frames of
docs/wire-protocol.md), then sends well-formed frames a real rank would
not. MODE:
  error  as rank WORLD-1: an error event of its own whose status is STATUS
         (one no run ends with, for the test);
  late   as ranks WORLD-2 and WORLD-1: the last one leaves without BYE (a
         death); the other, asked to FLUSH, first reports an error with
         STATUS (two failures, the death first).
It prints the address WELCOME gives for each lower rank ("peer J at IP").
It answers the controller (FLUSHED after FLUSH; BYE after ABORT) until the
controller closes its connections."""
import select, socket, struct, sys

from wire_frames import ABORT, BYE, EVENT, FLUSH, FLUSHED, HELLO, PEER, WELCOME, frame, read_frame

EV_ERROR, HAS_TEXT = 10, 8
port, token, world = int(sys.argv[1]), sys.argv[2].encode(), int(sys.argv[3])
mode, status = sys.argv[4], int(sys.argv[5])

def error_event(rank, st, text):
    """An error event: its fixed 134 bytes (type, flags, rank, t, line,
    status and text length at their offsets), then its text."""
    ev = bytearray(134)
    ev[0], ev[4] = EV_ERROR, HAS_TEXT
    struct.pack_into("<i", ev, 5, rank)
    struct.pack_into("<d", ev, 17, 0.001)
    struct.pack_into("<i", ev, 85, 1)
    struct.pack_into("<i", ev, 105, st)
    struct.pack_into("<I", ev, 113, len(text))
    return frame(EVENT, bytes(ev) + text)

ranks = [world - 1] if mode == "error" else [world - 2, world - 1]
ctl, lis = {}, {}
for r in ranks:  # every one joins before any WELCOME comes
    lis[r] = socket.socket()
    lis[r].bind(("127.0.0.1", 0))
    lis[r].listen(world)
    ctl[r] = socket.create_connection(("127.0.0.1", port))
    ctl[r].sendall(frame(HELLO, token + struct.pack("<IIIHH", r, world, 0x7F000001,
                                                    lis[r].getsockname()[1], 0)))
mesh = []
for r in ranks:
    while True:
        t, meta = read_frame(ctl[r])
        if t == WELCOME:
            break
    fixed = len(meta) - 6 * world  # the addresses close WELCOME: 6 bytes per rank
    for j in range(r):
        ip, p = struct.unpack_from("<IH", meta, fixed + 6 * j)
        print("peer %d at %s" % (j, socket.inet_ntoa(struct.pack(">I", ip))), flush=True)
        m = socket.create_connection((socket.inet_ntoa(struct.pack(">I", ip)), p))
        m.sendall(frame(PEER, token + struct.pack("<II", r, world)))
        mesh.append(m)
if mode == "error":
    ctl[ranks[0]].sendall(error_event(ranks[0], status, b"liar.lua:1: an error with a status of its own"))
else:
    ctl.pop(ranks[1]).close()  # a death: no BYE
print("sent", flush=True)
while ctl:
    ready, _, _ = select.select(list(ctl.values()), [], [], 60)
    if not ready:
        break
    for r, s in list(ctl.items()):
        if s not in ready:
            continue
        try:
            t, _ = read_frame(s)
            if t == FLUSH and mode == "late":
                s.sendall(error_event(r, status, b"liar.lua:1: a failure of its own while asked to flush"))
                s.sendall(frame(FLUSHED))
            elif t == ABORT:
                s.sendall(frame(BYE))
        except (EOFError, OSError):
            del ctl[r]
