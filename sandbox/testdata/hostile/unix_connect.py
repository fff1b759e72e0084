# Connects to the UNIX socket at argv[1] and sends "pwned".
import socket, sys, errno
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
    s.sendall(b"pwned")
    print("connected")
except OSError as e:
    print("connect failed", errno.errorcode.get(e.errno, e.errno))
