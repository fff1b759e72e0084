package sandbox

import (
	"errors"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// CheckDiskBound at the bound: a filesystem exactly as large as the
// limits passes; one byte or one inode over does not.
func TestCheckDiskBound(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Files == 0 {
		t.Skipf("%s's filesystem reports no inode count; the inode bound cannot be checked there", dir)
	}
	size, inodes := int64(st.Blocks)*st.Frsize, int64(st.Files)
	// A path not made yet is checked on the folder that will hold it.
	path := filepath.Join(dir, "not", "yet")
	if err := CheckDiskBound(path, Limits{DiskBytes: size, DiskInodes: inodes}); err != nil {
		t.Errorf("at the bounds: %v", err)
	}
	for name, l := range map[string]Limits{
		"one byte under":  {DiskBytes: size - 1, DiskInodes: inodes},
		"one inode under": {DiskBytes: size, DiskInodes: inodes - 1},
	} {
		err := CheckDiskBound(path, l)
		var be *DiskBoundError
		if !errors.As(err, &be) || !errors.Is(err, ErrUnboundedDisk) || be.Path != dir || be.Bytes != size {
			t.Errorf("%s: %v (%+v)", name, err, be)
		}
	}
}
