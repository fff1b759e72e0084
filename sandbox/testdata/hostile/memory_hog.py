# Allocates and touches argv[1] MiB.
import sys
buf = bytearray(int(sys.argv[1]) << 20)
buf[::4096] = b"x" * len(buf[::4096])
print("allocated", len(buf))
