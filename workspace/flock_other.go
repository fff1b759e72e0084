//go:build !unix

package workspace

import (
	"errors"
	"fmt"
	"os"
)

// errNoFlock explains why locking fails on systems without flock.
var errNoFlock = errors.New("workspace locking needs flock, available on Unix systems only")

// tryFlock fails: without flock, two processes could run in one workspace.
func tryFlock(f *os.File, exclusive bool) (bool, error) {
	return false, fmt.Errorf("flock %s: %w", f.Name(), errNoFlock)
}

func unflock(*os.File) {}
