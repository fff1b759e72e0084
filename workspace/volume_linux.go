//go:build linux

package workspace

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// unmountVolume unmounts whatever is mounted at dir (a workspace's volume;
// nothing else is ever mounted on a workspace directory). A volume still
// busy after a short wait is detached lazily.
func unmountVolume(dir string) error {
	var st, parent unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if err := unix.Lstat(filepath.Dir(dir), &parent); err != nil {
		return fmt.Errorf("stat %s: %w", filepath.Dir(dir), err)
	}
	if st.Dev == parent.Dev {
		return nil // not a mount point
	}
	var err error
	for i := 0; i < 50; i++ {
		if err = unix.Unmount(dir, unix.UMOUNT_NOFOLLOW); !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(dir, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
	}
	if err != nil {
		return fmt.Errorf("unmount the volume at %s: %w", dir, err)
	}
	return nil
}
