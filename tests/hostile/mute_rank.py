#!/usr/bin/env python3
"""mute_rank.py PORT TOKEN RANK WORLD: joins the tcp job whose controller
listens on 127.0.0.1:PORT as the highest rank, as a rank process would
(HELLO, WELCOME, then PEER to every lower rank; the frames of
docs/wire-protocol.md), and then never reads its mesh connections: a peer
that takes nothing, so what the others send piles up at the senders. It
answers the controller (ALIVE; BYE after ABORT) and leaves when the
controller closes its connection."""
import socket, struct, sys, time

from wire_frames import ABORT, ALIVE, BYE, HELLO, PEER, WELCOME, frame, read_frame

port, token, rank, world = int(sys.argv[1]), sys.argv[2].encode(), int(sys.argv[3]), int(sys.argv[4])

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
    mesh.append(m)  # never read
print("joined", flush=True)
ctl.settimeout(0.2)
while True:
    ctl.sendall(frame(ALIVE, struct.pack("<I", 0)))
    try:
        t, _ = read_frame(ctl)
    except socket.timeout:
        continue
    except (EOFError, OSError):
        break
    if t == ABORT:
        ctl.sendall(frame(BYE))
