# Connects to a TCP listener on 127.0.0.1; argv[1] is the port.
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
    s.sendall(b"pwned")
    s.close()
    print("connected")
except OSError as e:
    print("connect failed:", e)
    sys.exit(3)
