# Makes a syscall through another ABI than the native one and prints how
# the process ended: "i386" uses int 0x80 from executable memory, "x32"
# sets bit 30 of the number.
import ctypes, mmap, os, signal, sys
abi = sys.argv[1]
pid = os.fork()
if pid == 0:
    if abi == "i386":
        # mov eax, 20 (getpid); int 0x80; ret
        code = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"
        m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        m.write(code)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        ctypes.CFUNCTYPE(ctypes.c_long)(addr)()
    else:
        libc = ctypes.CDLL(None)
        libc.syscall(ctypes.c_long(0x40000000 | 39))
    os._exit(0)
_, st = os.waitpid(pid, 0)
if os.WIFSIGNALED(st):
    print("killed by", signal.Signals(os.WTERMSIG(st)).name)
else:
    print("exited", os.WEXITSTATUS(st))
