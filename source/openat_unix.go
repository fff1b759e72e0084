//go:build unix && !linux

package source

import "golang.org/x/sys/unix"

// dirRef opens a folder to resolve paths relative to it.
const dirRef = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK

// openBeneath opens name (a valid fs path) relative to dirfd with flags,
// one element at a time with O_NOFOLLOW, so that no element may be a
// symbolic link.
func openBeneath(dirfd int, name string, flags int, _ bool) (int, error) {
	return walkBeneath(dirfd, name, flags)
}
