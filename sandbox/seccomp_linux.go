//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter of the isolated runner. It is a deny list on top of
// the other layers (namespaces, the private root, no capabilities,
// Landlock): it removes the kernel interfaces a command never needs and
// that keep producing privilege escalations (user namespaces, io_uring,
// bpf, userfaultfd, keyrings, mount APIs, ptrace, perf). Syscalls the
// build does not know (numbers above the highest one it knows) fail with
// ENOSYS, so a kernel's new interfaces are closed until reviewed.
//
// It is written as plain BPF rather than with a policy library for two
// reasons. A call from another architecture's ABI (i386 `int 0x80` on an
// amd64 kernel with IA32 emulation) must kill the process: a library that
// returns the default action for a foreign architecture would allow it
// under a deny list. And arguments the kernel declares 32-bit (socket's
// domain, ioctl's request, modes) must be compared on their low 32 bits
// only, or a caller could set the high bits to slip past an equality
// test.

// seccomp return values.
const (
	retAllow       = unix.SECCOMP_RET_ALLOW
	retKillProcess = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM       = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS      = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retEAFNOSUPP   = unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)
)

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16 // args[i] at 16+8*i; the low 32 bits first (little endian)
)

// cloneNewFlags are the namespace flags of clone(2).
const cloneNewFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// deniedSyscalls fail with EPERM. Each group says why.
var deniedSyscalls = []struct {
	why  string
	nrs  []uintptr
	name []string
}{
	{"keyrings are shared per user and reach kernel key types", []uintptr{unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY}, []string{"keyctl", "add_key", "request_key"}},
	{"eBPF, perf and userfaultfd are frequent escalation paths", []uintptr{unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD}, []string{"bpf", "perf_event_open", "userfaultfd"}},
	{"io_uring bypasses syscall filtering and has a long CVE record", []uintptr{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER}, []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}},
	{"new namespaces (nested user namespaces give capabilities over new network and mount namespaces)", []uintptr{unix.SYS_UNSHARE, unix.SYS_SETNS}, []string{"unshare", "setns"}},
	{"every mount API", []uintptr{unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_MOVE_MOUNT,
		unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR, unix.SYS_CHROOT},
		[]string{"mount", "umount2", "pivot_root", "open_tree", "open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "chroot"}},
	{"kernel images and modules", []uintptr{unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE},
		[]string{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"}},
	{"reading or writing other processes (ptrace: see argRules)", []uintptr{unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD, unix.SYS_PROCESS_MADVISE, unix.SYS_KCMP},
		[]string{"process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp"}},
	{"host administration: accounting, swap, reboot, clocks, quotas, the kernel log", []uintptr{unix.SYS_ACCT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT,
		unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX, unix.SYS_SYSLOG, unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD},
		[]string{"acct", "swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "syslog", "quotactl", "quotactl_fd"}},
	{"file handles bypass path checks; fanotify watches the whole host", []uintptr{unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_FANOTIFY_INIT},
		[]string{"name_to_handle_at", "open_by_handle_at", "fanotify_init"}},
	{"NUMA page migration across the host", []uintptr{unix.SYS_MOVE_PAGES, unix.SYS_MIGRATE_PAGES}, []string{"move_pages", "migrate_pages"}},
}

// filterRule is one syscall whose arguments decide.
type filterRule struct {
	nr   uintptr
	name string
	// body returns the instructions run when nr matches; they end in a
	// return or fall through to "allow". The syscall number is loaded
	// again after the body.
	body func() []unix.SockFilter
}

// seccompFilter returns the program for this architecture.
func seccompFilter() []unix.SockFilter {
	var p []unix.SockFilter
	p = append(p,
		ld(offArch),
		jeq(auditArch, 1, 0),
		ret(retKillProcess),
		ld(offNr),
	)
	p = append(p, archPrologue()...)
	p = append(p, jgt(maxKnownSyscall, 0, 1), ret(retENOSYS))
	p = append(p, jeq(unix.SYS_CLONE3, 0, 1), ret(retENOSYS))  // its flags are behind a pointer; libc falls back to clone
	p = append(p, jeq(unix.SYS_OPENAT2, 0, 1), ret(retENOSYS)) // its mode is behind a pointer; libc uses openat
	for _, g := range deniedSyscalls {
		for _, nr := range g.nrs {
			p = append(p, jeq(uint32(nr), 0, 1), ret(retEPERM))
		}
	}
	for _, r := range argRules() {
		body := r.body()
		body = append(body, ret(retAllow))
		p = append(p, jeq(uint32(r.nr), 0, uint8(len(body))))
		p = append(p, body...)
	}
	p = append(p, ret(retAllow))
	return p
}

// argRules are the syscalls allowed only with some arguments.
func argRules() []filterRule {
	rules := []filterRule{
		{unix.SYS_CLONE, "clone", func() []unix.SockFilter { return denyBits(0, cloneNewFlags, retEPERM) }},
		{unix.SYS_SOCKET, "socket", socketRule},
		{unix.SYS_SOCKETPAIR, "socketpair", func() []unix.SockFilter {
			// Only UNIX socket pairs exist; refusing the rest keeps
			// other families' creation code (and, on a modular kernel,
			// their module autoloading) out of reach.
			return []unix.SockFilter{
				ld(argLo(0)),
				jeq(unix.AF_UNIX, 1, 0),
				ret(retEAFNOSUPP),
			}
		}},
		{unix.SYS_PTRACE, "ptrace", func() []unix.SockFilter {
			// Only PTRACE_TRACEME and PTRACE_DETACH, which the helper
			// uses to stop the command at its execve while it sets the
			// rlimits. Without PEEK, POKE, ATTACH or SEIZE a tracer can
			// only let its tracee go.
			return []unix.SockFilter{
				ld(argLo(0) + 4), // the high word: request is a long
				jeq(0, 1, 0),
				ret(retEPERM),
				ld(argLo(0)),
				jeq(unix.PTRACE_TRACEME, 2, 0),
				jeq(unix.PTRACE_DETACH, 1, 0),
				ret(retEPERM),
			}
		}},
		{unix.SYS_IOCTL, "ioctl", func() []unix.SockFilter {
			// TIOCSTI and TIOCLINUX push keystrokes into a terminal.
			return []unix.SockFilter{
				ld(argLo(1)),
				jeq(unix.TIOCSTI, 0, 1), ret(retEPERM),
				jeq(unix.TIOCLINUX, 0, 1), ret(retEPERM),
			}
		}},
		{unix.SYS_PERSONALITY, "personality", func() []unix.SockFilter {
			// Only the Linux personality, with or without the flags
			// Docker also allows; the rest widen the attack surface
			// (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE ...).
			ok := []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}
			f := []unix.SockFilter{ld(argLo(0))}
			for i, v := range ok {
				f = append(f, jeq(v, uint8(len(ok)-i), 0))
			}
			return append(f, ret(retEPERM))
		}},
		{unix.SYS_FCHMOD, "fchmod", func() []unix.SockFilter { return denyBits(1, suidBits, retEPERM) }},
		{unix.SYS_FCHMODAT, "fchmodat", func() []unix.SockFilter { return denyBits(2, suidBits, retEPERM) }},
		{unix.SYS_FCHMODAT2, "fchmodat2", func() []unix.SockFilter { return denyBits(2, suidBits, retEPERM) }},
		{unix.SYS_OPENAT, "openat", func() []unix.SockFilter { return denyBits(3, suidBits, retEPERM) }},
		{unix.SYS_MKDIRAT, "mkdirat", func() []unix.SockFilter { return denyBits(2, suidBits, retEPERM) }},
		{unix.SYS_MKNODAT, "mknodat", func() []unix.SockFilter { return denyBits(2, suidBits, retEPERM) }},
	}
	return append(rules, archArgRules()...)
}

// suidBits are the set-user-ID and set-group-ID mode bits. Files the
// command makes are stored as the host's own on an idmapped workspace, so
// it may never set them.
const suidBits = unix.S_ISUID | unix.S_ISGID

// socketRule allows the families programs need — UNIX, IPv4, IPv6 (the
// network namespace and Landlock decide what they reach) and the routing
// netlink protocol libc uses to list addresses — and refuses the rest
// (packet sockets, vsock, other netlink protocols, ...).
func socketRule() []unix.SockFilter {
	return []unix.SockFilter{
		ld(argLo(0)),
		jeq(unix.AF_UNIX, 7, 0), // to the allow that follows the body
		jeq(unix.AF_INET, 6, 0),
		jeq(unix.AF_INET6, 5, 0),
		jeq(unix.AF_NETLINK, 1, 0),
		ret(retEAFNOSUPP),
		ld(argLo(2)),
		jeq(unix.NETLINK_ROUTE, 1, 0), // fall through to allow
		ret(retEAFNOSUPP),
	}
}

// denyBits returns a body that fails with r when any bit of mask is set in
// the low 32 bits of argument arg.
func denyBits(arg int, mask uint32, r uint32) []unix.SockFilter {
	return []unix.SockFilter{
		ld(argLo(arg)),
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jt: 0, Jf: 1, K: mask},
		ret(r),
	}
}

func argLo(i int) uint32 { return uint32(offArgs + 8*i) }

func ld(off uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
}

func jeq(v uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: v}
}

func jgt(v uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K, Jt: jt, Jf: jf, K: v}
}

func ret(v uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v}
}

// loadSeccomp installs the filter on the calling thread. no_new_privs must
// be set already.
func loadSeccomp() error {
	prog := seccompFilter()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return fmt.Errorf("install seccomp filter: %w", errno)
	}
	return nil
}
