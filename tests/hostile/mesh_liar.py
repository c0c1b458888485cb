#!/usr/bin/env python3
"""mesh_liar.py PORT TOKEN MODE: joins the 2-rank tcp job whose controller
listens on 127.0.0.1:PORT as rank 1, as a rank process would (HELLO,
WELCOME, PEER to rank 0; the frames of docs/wire-protocol.md), then puts
bytes no rank would write on its connection to rank 0. MODE:
  garbage  bytes that are not a frame;
  cut      the first half of an MSG frame's header, then it closes its
           sending side (the connection stays half open: this process lives
           on, and goes on answering the controller).
It prints "sent" once they are written, and answers the controller (BYE
after ABORT, FLUSHED after FLUSH) until the controller closes."""
import select, socket, struct, sys

from wire_frames import ABORT, BYE, FLUSH, FLUSHED, HELLO, PEER, WELCOME, frame, read_frame

port, token, mode = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]
world, rank = 2, 1
lis = socket.socket()
lis.bind(("127.0.0.1", 0))
lis.listen(world)
ctl = socket.create_connection(("127.0.0.1", port))
ctl.sendall(frame(HELLO, token + struct.pack("<IIIHH", rank, world, 0x7F000001,
                                              lis.getsockname()[1], 0)))
while True:
    t, meta = read_frame(ctl)
    if t == WELCOME:
        break
ip, p = struct.unpack_from("<IH", meta, len(meta) - 6 * world)
mesh = socket.create_connection((socket.inet_ntoa(struct.pack(">I", ip)), p))
mesh.sendall(frame(PEER, token + struct.pack("<II", rank, world)))
if mode == "garbage":
    mesh.sendall(b"this is not a frame at all")
else:
    mesh.sendall(b"CSIM\x03\x04\x00\x00")
    mesh.shutdown(socket.SHUT_WR)
print("sent", flush=True)
while True:
    ready, _, _ = select.select([ctl], [], [], 100)
    if not ready:
        break
    try:
        t, _ = read_frame(ctl)
    except (EOFError, OSError):
        break
    if t == FLUSH:
        ctl.sendall(frame(FLUSHED))
    elif t == ABORT:
        ctl.sendall(frame(BYE))
