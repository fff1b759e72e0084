//go:build unix && !linux

package source

import (
	"errors"

	"golang.org/x/sys/unix"
)

// dirRef opens a folder to resolve paths relative to it.
const dirRef = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK

// openBeneath opens name (a valid fs path) relative to dirfd with flags,
// one element at a time with O_NOFOLLOW, so that no element may be a
// symbolic link.
func openBeneath(dirfd int, name string, flags int, _ bool) (int, error) {
	return walkBeneath(dirfd, name, flags)
}

// lstatFlags is 0: without O_PATH, paths are stat'ed relative to their
// folder.
const lstatFlags = 0

// errNoOpenat2 reports that this system has no openat2.
var errNoOpenat2 = errors.New("openat2 unavailable")

// openAbs is unavailable on this system.
func openAbs(string, int) (int, error) { return -1, errNoOpenat2 }
