# Reads the session keyring and /proc/keys, and tries to add a key.
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
SYS_keyctl, SYS_add_key = 250, 248
KEYCTL_READ, KEY_SPEC_SESSION_KEYRING = 11, -3
buf = ctypes.create_string_buffer(4096)
r = libc.syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, buf, 4096)
print("keyctl_read", r if r >= 0 else errno.errorcode.get(ctypes.get_errno()))
r = libc.syscall(SYS_add_key, b"user", b"planted", b"x", 1, KEY_SPEC_SESSION_KEYRING)
print("add_key", "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno()))
try:
    print("proc_keys", repr(open("/proc/keys").read()))
except OSError as e:
    print("proc_keys", errno.errorcode.get(e.errno))
