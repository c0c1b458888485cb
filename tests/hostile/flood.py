#!/usr/bin/env python3
"""flood.py PORT N: opens N connections to 127.0.0.1:PORT that never send a
byte, prints "opened K" (those the kernel took), and holds them until it is
killed (an hour at most)."""
import socket, sys, time

port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for _ in range(n):
    try:
        socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    except OSError:
        break
print("opened", len(socks), flush=True)
time.sleep(3600)
