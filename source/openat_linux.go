package source

import (
	"errors"

	"golang.org/x/sys/unix"
)

// dirRef opens a folder only to resolve paths relative to it (O_PATH: no
// read permission needed, nothing read).
const dirRef = unix.O_PATH | unix.O_DIRECTORY

// lstatFlags open a path only to stat it, a link at its end as the link.
const lstatFlags = unix.O_PATH | unix.O_NOFOLLOW

// errNoOpenat2 reports that the kernel has no openat2 (before Linux 5.6)
// or a filter refuses it; callers then resolve paths element by element.
var errNoOpenat2 = errors.New("openat2 unavailable")

// openAbs opens the absolute host path p, whose elements must not be
// symbolic links (RESOLVE_NO_SYMLINKS), with flags.
func openAbs(p string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN) && tries < 16:
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			return -1, errNoOpenat2
		case errors.Is(err, unix.ELOOP):
			return -1, errSymlinkInPath
		}
		return -1, err
	}
}

// openBeneath opens name (a valid fs path) relative to dirfd with flags.
// No element of name may be a symbolic link and the result is beneath
// dirfd: openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or, where the
// kernel has no openat2 (before Linux 5.6) or a filter refuses it, one
// openat with O_NOFOLLOW per element.
func openBeneath(dirfd int, name string, flags int, walk bool) (int, error) {
	if walk {
		return walkBeneath(dirfd, name, flags)
	}
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(dirfd, name, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN) && tries < 16:
			continue // a rename raced the lookup; the kernel asks to retry
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			return walkBeneath(dirfd, name, flags)
		case errors.Is(err, unix.ELOOP):
			return -1, errSymlinkInPath
		}
		return -1, err
	}
}
