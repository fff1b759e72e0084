//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	// maxKnownSyscall is the highest amd64 syscall number this build
	// knows; higher ones fail with ENOSYS until reviewed.
	maxKnownSyscall = unix.SYS_RSEQ_SLICE_YIELD
	// x32SyscallBit marks the x32 ABI, which shares the amd64 audit arch.
	x32SyscallBit = 0x40000000
)

// archPrologue refuses the x32 ABI (numbers with bit 30 set) before any
// number is compared. The syscall number is loaded.
func archPrologue() []unix.SockFilter {
	return []unix.SockFilter{
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: 0, Jf: 1, K: x32SyscallBit},
		ret(retKillProcess),
	}
}

// archArgRules adds the amd64 syscalls that only exist in their older,
// non-"at" forms.
func archArgRules() []filterRule {
	return []filterRule{
		{unix.SYS_CHMOD, "chmod", func() []unix.SockFilter { return denyBits(1, suidBits, retEPERM) }},
		{unix.SYS_OPEN, "open", func() []unix.SockFilter { return denyBits(2, suidBits, retEPERM) }},
		{unix.SYS_CREAT, "creat", func() []unix.SockFilter { return denyBits(1, suidBits, retEPERM) }},
		{unix.SYS_MKDIR, "mkdir", func() []unix.SockFilter { return denyBits(1, suidBits, retEPERM) }},
		{unix.SYS_MKNOD, "mknod", func() []unix.SockFilter { return denyBits(1, suidBits, retEPERM) }},
		// modify_ldt and ioperm/iopl reach x86 hardware state.
		{unix.SYS_MODIFY_LDT, "modify_ldt", func() []unix.SockFilter { return []unix.SockFilter{ret(retEPERM)} }},
		{unix.SYS_IOPL, "iopl", func() []unix.SockFilter { return []unix.SockFilter{ret(retEPERM)} }},
		{unix.SYS_IOPERM, "ioperm", func() []unix.SockFilter { return []unix.SockFilter{ret(retEPERM)} }},
		{unix.SYS_USELIB, "uselib", func() []unix.SockFilter { return []unix.SockFilter{ret(retEPERM)} }},
	}
}
