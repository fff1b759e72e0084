package workspace

import (
	"errors"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// exchange swaps the directory entries a and b (paths under root) in one
// step with renameat2(RENAME_EXCHANGE). It returns errNoExchange when the
// kernel or filesystem lacks it.
func exchange(root *os.Root, a, b string) error {
	da, err := root.Open(path.Dir(a))
	if err != nil {
		return err
	}
	defer da.Close()
	db, err := root.Open(path.Dir(b))
	if err != nil {
		return err
	}
	defer db.Close()
	err = unix.Renameat2(int(da.Fd()), path.Base(a), int(db.Fd()), path.Base(b), unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		return errNoExchange
	}
	if err != nil {
		return &os.LinkError{Op: "renameat2", Old: a, New: b, Err: err}
	}
	return nil
}
