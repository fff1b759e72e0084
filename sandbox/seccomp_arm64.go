//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	// maxKnownSyscall is the highest arm64 syscall number this build
	// knows; higher ones fail with ENOSYS until reviewed.
	maxKnownSyscall = unix.SYS_RSEQ_SLICE_YIELD
)

// archPrologue has nothing to add on arm64 (no second ABI shares its
// audit arch).
func archPrologue() []unix.SockFilter { return nil }

// archArgRules has nothing to add: arm64 only has the "at" forms.
func archArgRules() []filterRule { return nil }
