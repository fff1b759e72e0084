# Sends a UDP datagram to 127.0.0.1:argv[1], then resolves a public name.
import socket, sys
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"pwned", ("127.0.0.1", int(sys.argv[1])))
    print("udp sent")
except OSError as e:
    print("udp failed:", e)
try:
    socket.getaddrinfo("example.com", 443)
    print("dns resolved")
except OSError as e:
    print("dns failed:", e)
