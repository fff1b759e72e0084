# Forks argv[1] processes that each touch argv[2] MiB and hold it until
# all have it; prints how each ended.
import os, sys, time
n, mib = int(sys.argv[1]), int(sys.argv[2])
pids = []
for i in range(n):
    pid = os.fork()
    if pid == 0:
        buf = bytearray(mib << 20)
        buf[::4096] = b"x" * len(buf[::4096])
        time.sleep(1)
        os._exit(0)
    pids.append(pid)
ok = 0
for pid in pids:
    _, st = os.waitpid(pid, 0)
    if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
        ok += 1
print("held", ok, "of", n)
