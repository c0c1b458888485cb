#!/usr/bin/env python3
"""slow_relay.py LISTEN_PORT_FILE TARGET_PORT DELAY: a TCP relay on loopback
that holds the first connection silent for DELAY seconds before relaying it
to TARGET_PORT both ways: a rank on a loaded machine, slow between connecting
and sending HELLO. Writes the port it listens on to LISTEN_PORT_FILE."""
import socket, sys, threading, time

out, target, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
with open(out + ".tmp", "w") as f:
    f.write(str(ls.getsockname()[1]))
import os
os.rename(out + ".tmp", out)
a, _ = ls.accept()
b = socket.create_connection(("127.0.0.1", target))
time.sleep(delay)

def pump(src, dst):
    try:
        while True:
            d = src.recv(65536)
            if not d:
                break
            dst.sendall(d)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

t = threading.Thread(target=pump, args=(b, a), daemon=True)
t.start()
pump(a, b)
t.join(5)
