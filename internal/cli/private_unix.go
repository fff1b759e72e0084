//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivateDir reports an error unless dir is a directory (not a link)
// owned by this user that nobody else can write or read.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case ok && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("directory %s belongs to uid %d, not to you", dir, st.Uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("directory %s has mode %v; others may read or change it", dir, fi.Mode().Perm())
	}
	return nil
}
