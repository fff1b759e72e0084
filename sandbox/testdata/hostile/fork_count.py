# Forks argv[1] sleeping children and prints how many forks succeeded.
import os, sys, time
n = 0
for _ in range(int(sys.argv[1])):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
print("forked", n, flush=True)
