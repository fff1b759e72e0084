# Tries to change a host file's metadata: chmod (setuid included), utimes
# and an extended attribute. argv[1] is the file's host path. Prints one
# line per attempt: "<op> ok" or "<op> <errno name>".
import errno, os, sys
p = sys.argv[1]
def attempt(name, f):
    try:
        f()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
attempt("chmod", lambda: os.chmod(p, 0o600))
attempt("chmod_suid", lambda: os.chmod(p, 0o4755))
attempt("utime", lambda: os.utime(p, (0, 0)))
attempt("setxattr", lambda: os.setxattr(p, "user.pwned", b"1"))
attempt("stat", lambda: os.stat(p))
