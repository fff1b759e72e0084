//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// tryFlock takes a non-blocking flock on f. It reports false when another
// open file description holds a conflicting lock.
func tryFlock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		default:
			return false, fmt.Errorf("flock %s: %w", f.Name(), err)
		}
	}
}

// unflock releases f's flock; closing f would release it too.
func unflock(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }
