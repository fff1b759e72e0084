//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// FeatureVolume names what NewVolume needs in a FeatureError.
const FeatureVolume = "bounded volumes (root, loop devices and mkfs.ext4)"

// ext4 geometry used to turn an inode bound into mkfs's -N: 4 KiB blocks,
// 256-byte inodes, so inode tables grow by 16 inodes per block group.
const (
	volBlockSize   = 4096
	volInodeSize   = 256
	volGroupBlocks = 8 * volBlockSize
)

// NewVolume mounts a bounded filesystem at dir, creating its image file
// first when it does not exist. dir must be an empty directory (or already
// the mount of this image, which is then returned as is); image is a file
// path outside dir, for example in the host's own records. The filesystem
// is ext4 on a loop device (or a tmpfs with VolumeOptions.InMemory, when
// image is ignored), mounted nosuid and nodev, so nothing stored on it can
// raise privileges on the host. It needs root (CAP_SYS_ADMIN), and
// mkfs.ext4 and loop devices for an image; without them the error is a
// *FeatureError.
func NewVolume(ctx context.Context, dir, image string, opts *VolumeOptions) (*Volume, error) {
	var o VolumeOptions
	if opts != nil {
		o = *opts
	}
	if o.Bytes < 0 || o.Inodes < 0 {
		return nil, fmt.Errorf("%w: VolumeOptions.Bytes %d and Inodes %d must not be negative; use 0 for the defaults", ErrInvalidSpec, o.Bytes, o.Inodes)
	}
	if o.Bytes == 0 {
		o.Bytes = DefaultDiskBytes
	}
	if o.Inodes == 0 {
		o.Inodes = DefaultDiskInodes
	}
	if o.Bytes < 16<<20 {
		return nil, fmt.Errorf("%w: VolumeOptions.Bytes %d is below the 16 MiB a volume needs", ErrInvalidSpec, o.Bytes)
	}
	if o.InMemory {
		image = ""
	}
	if !filepath.IsAbs(dir) || (!o.InMemory && !filepath.IsAbs(image)) {
		return nil, fmt.Errorf("%w: volume directory %q and image %q must be absolute paths", ErrInvalidSpec, dir, image)
	}
	dir = filepath.Clean(dir)
	if !o.InMemory {
		image = filepath.Clean(image)
		if within(dir, image) {
			return nil, fmt.Errorf("%w: volume image %s lies inside the directory %s it is mounted on; keep it outside", ErrInvalidSpec, image, dir)
		}
	}
	v := &Volume{dir: dir, image: image, bytes: o.Bytes, inodes: o.Inodes, inMemory: o.InMemory}
	if mounted, err := v.mounted(); err != nil || mounted {
		return v, err
	}
	if os.Geteuid() != 0 {
		return nil, &FeatureError{Feature: FeatureVolume, Err: errors.New("mounting a filesystem needs root")}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: volume directory: %w", err)
	}
	if len(entries) > 0 {
		return nil, fmt.Errorf("%w: volume directory %s; a volume is mounted only on an empty directory", ErrNotEmpty, dir)
	}
	if o.InMemory {
		opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700", o.Bytes, o.Inodes)
		if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return nil, fmt.Errorf("sandbox: mount an in-memory volume at %s: %w", dir, err)
		}
		return v, nil
	}
	created := false
	if _, err := os.Lstat(image); errors.Is(err, os.ErrNotExist) {
		if err := makeImage(ctx, image, o); err != nil {
			return nil, err
		}
		created = true
	} else if err != nil {
		return nil, fmt.Errorf("sandbox: volume image: %w", err)
	}
	if err := mountImage(image, dir); err != nil {
		if created {
			_ = os.Remove(image)
		}
		return nil, err
	}
	if created {
		// mkfs makes lost+found; a workspace has no use for it.
		_ = os.Remove(filepath.Join(dir, "lost+found"))
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil && (int64(st.Files) > o.Inodes || int64(st.Blocks)*st.Frsize > o.Bytes) {
		_ = v.Unmount()
		return nil, fmt.Errorf("sandbox: volume %s came out larger than asked (%d bytes, %d inodes; asked %d, %d)", image, int64(st.Blocks)*st.Frsize, st.Files, o.Bytes, o.Inodes)
	}
	return v, nil
}

// mounted reports whether v.dir is already the mount of v.image.
func (v *Volume) mounted() (bool, error) {
	var dst, parent unix.Stat_t
	if err := unix.Stat(v.dir, &dst); err != nil {
		return false, fmt.Errorf("sandbox: volume directory: %w", err)
	}
	if dst.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false, fmt.Errorf("%w: volume directory %s is not a directory", ErrInvalidSpec, v.dir)
	}
	if err := unix.Stat(filepath.Dir(v.dir), &parent); err != nil {
		return false, fmt.Errorf("sandbox: volume directory: %w", err)
	}
	if dst.Dev == parent.Dev {
		return false, nil
	}
	if v.inMemory {
		var st unix.Statfs_t
		if err := unix.Statfs(v.dir, &st); err == nil && st.Type == unix.TMPFS_MAGIC {
			return true, nil
		}
		return false, fmt.Errorf("%w: %s is already a mount point of something other than an in-memory volume", ErrInvalidSpec, v.dir)
	}
	backing, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/loop/backing_file", unix.Major(dst.Dev), unix.Minor(dst.Dev)))
	if err == nil && strings.TrimSpace(string(backing)) == v.image {
		return true, nil
	}
	return false, fmt.Errorf("%w: %s is already a mount point of something other than the volume image %s", ErrInvalidSpec, v.dir, v.image)
}

// makeImage creates a sparse image of o.Bytes and formats it.
func makeImage(ctx context.Context, image string, o VolumeOptions) error {
	mkfs, err := findMkfs()
	if err != nil {
		return &FeatureError{Feature: FeatureVolume, Err: err}
	}
	f, err := os.OpenFile(image, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sandbox: create volume image: %w", err)
	}
	err = f.Truncate(o.Bytes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(image)
		return fmt.Errorf("sandbox: size volume image %s: %w", image, err)
	}
	cmd := exec.CommandContext(ctx, mkfs, "-q", "-F", "-t", "ext4",
		"-b", strconv.Itoa(volBlockSize), "-I", strconv.Itoa(volInodeSize),
		"-N", strconv.FormatInt(volumeInodes(o.Bytes, o.Inodes), 10),
		"-m", "0", "-J", "size=4", "-L", "skillkit",
		"-E", "root_owner=0:0,lazy_itable_init=1,lazy_journal_init=1,nodiscard",
		image)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(image)
		return fmt.Errorf("sandbox: format volume image %s: %w: %s", image, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// volumeInodes returns the largest inode count at or below limit that
// mkfs keeps as is: a multiple of 16 per block group.
func volumeInodes(size, limit int64) int64 {
	groups := (size/volBlockSize + volGroupBlocks - 1) / volGroupBlocks
	step := groups * (volBlockSize / volInodeSize)
	n := limit / step * step
	if n < step {
		n = step
	}
	return n
}

// findMkfs locates mkfs.ext4.
func findMkfs() (string, error) {
	for _, p := range []string{"/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4", "/usr/bin/mkfs.ext4"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("mkfs.ext4"); err == nil {
		return p, nil
	}
	return "", errors.New("mkfs.ext4 not found (install e2fsprogs)")
}

// mountImage attaches image to a free loop device and mounts it at dir.
// The loop device is released when the filesystem is unmounted.
func mountImage(image, dir string) error {
	img, err := os.OpenFile(image, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sandbox: open volume image: %w", err)
	}
	defer img.Close()
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return &FeatureError{Feature: FeatureVolume, Err: err}
	}
	defer ctl.Close()
	for attempt := 0; ; attempt++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return &FeatureError{Feature: FeatureVolume, Err: fmt.Errorf("find a free loop device: %w", err)}
		}
		dev := "/dev/loop" + strconv.Itoa(n)
		loop, err := os.OpenFile(dev, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("sandbox: open %s: %w", dev, err)
		}
		cfg := unix.LoopConfig{Fd: uint32(img.Fd())}
		cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR
		copy(cfg.Info.File_name[:], image)
		err = unix.IoctlLoopConfigure(int(loop.Fd()), &cfg)
		if errors.Is(err, unix.EBUSY) && attempt < 64 {
			loop.Close() // taken by another process meanwhile
			continue
		}
		if err != nil {
			loop.Close()
			return fmt.Errorf("sandbox: attach %s to %s: %w", image, dev, err)
		}
		err = unix.Mount(dev, dir, "ext4", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOATIME, "")
		// With AUTOCLEAR, closing the last reference after a failed
		// mount releases the device; after a mount it stays until
		// unmount.
		loop.Close()
		if err != nil {
			return fmt.Errorf("sandbox: mount volume %s at %s: %w", image, dir, err)
		}
		return nil
	}
}

// Unmount unmounts the volume, keeping its image (an in-memory volume's
// contents are gone). A volume still in use
// is detached lazily: it disappears from the directory at once and is
// released when its last user closes it.
func (v *Volume) Unmount() error {
	mounted, err := v.mounted()
	if err != nil || !mounted {
		return err
	}
	for i := 0; i < 50; i++ {
		err = unix.Unmount(v.dir, 0)
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(v.dir, unix.MNT_DETACH)
	}
	if err != nil {
		return fmt.Errorf("sandbox: unmount volume %s: %w", v.dir, err)
	}
	return nil
}

// Remove unmounts the volume and deletes its image: its contents are gone.
func (v *Volume) Remove() error {
	if err := v.Unmount(); err != nil {
		return err
	}
	if v.image == "" {
		return nil
	}
	if err := os.Remove(v.image); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sandbox: remove volume image: %w", err)
	}
	return nil
}
