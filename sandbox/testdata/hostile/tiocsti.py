# Pushes a keystroke into the terminal on descriptor argv[1] (TIOCSTI);
# prints "injected" or the errno name. A pipe answers ENOTTY, the seccomp
# filter EPERM.
import errno, fcntl, sys, termios
try:
    fcntl.ioctl(int(sys.argv[1]), termios.TIOCSTI, b"x")
    print("injected")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
