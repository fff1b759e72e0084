//go:build unix

package archive

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownedFolder refuses a cache folder that someone else could have filled:
// one that is a link, is not this user's, or that group or others may
// write. A pinned archive found in the cache is used without a download,
// so whoever can write the cache could otherwise replace what a pin
// vouches for.
func ownedFolder(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		return fmt.Errorf("%s is not a folder (a link?); set $SKILLKIT_CACHE_DIR to a folder of your own", dir)
	case ok && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d); set $SKILLKIT_CACHE_DIR to a folder of your own", dir, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s may be written by others (mode %v); chmod go-w it, or set $SKILLKIT_CACHE_DIR to a folder only you can write", dir, fi.Mode().Perm())
	}
	return nil
}
