# Makes inotify instances until the kernel refuses one; prints how many.
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 100000:
    if libc.inotify_init() < 0:
        print("instances", n, errno.errorcode.get(ctypes.get_errno()))
        break
    n += 1
print("user_ns_limit", open("/proc/sys/user/max_user_namespaces").read().strip())
