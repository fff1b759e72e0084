# Listens on a UNIX socket in the workspace for argv[1] seconds and says
# whether anybody connected.
import socket, sys, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("listen.sock")
s.listen(1)
s.settimeout(float(sys.argv[1]))
try:
    c, _ = s.accept()
    print("accepted", c.recv(16))
except socket.timeout:
    print("nobody connected")
