//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package termtext

import "golang.org/x/sys/unix"

// IsTerminal reports whether the file descriptor fd is a terminal: one
// the terminal-attributes ioctl succeeds on.
func IsTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	return err == nil
}
