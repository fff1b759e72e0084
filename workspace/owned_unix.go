//go:build unix

package workspace

import (
	"os"
	"syscall"
)

// ownedByMe reports whether path (not followed) belongs to this process's
// effective user.
func ownedByMe(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
