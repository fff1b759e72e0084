//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package termtext

// IsTerminal reports false: terminals are not detected on this system, so
// output stays byte-exact.
func IsTerminal(fd uintptr) bool { return false }
