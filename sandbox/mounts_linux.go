//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// The private root. The helper builds it on a fresh tmpfs and enters it
// with pivot_root, so the command's world holds only: read-only system
// directories, a minimal /etc, a fresh /proc with the kernel-wide files
// masked, a minimal /dev, private /tmp and /dev/shm, the workspace at
// WorkspaceDir and the Spec.ReadOnly paths. No /run, /sys, /home, /root or
// /var of the host is there.

// System directories bound read-only when the host has them as
// directories; a host symlink (merged /usr) is recreated as a symlink.
var rootSystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// Kernel-wide /proc files that any user may read and that reveal the
// host (keys of every user, timers and scheduler state of every process,
// the kernel command line, other workspaces' block devices and their
// activity, the locks and interrupts of the host, its boot id) and kcore:
// masked with an empty file.
// Directories of hardware state: masked with an empty read-only tmpfs.
// /proc/sys is made read-only. The other files only the host's root may
// read (kmsg, slabinfo, ...) stay unreadable: the command's uid 0 is not the
// host's.
var (
	procMaskedFiles = []string{"keys", "key-users", "timer_list", "sched_debug", "latency_stats", "cmdline", "kcore",
		"diskstats", "partitions", "swaps", "locks", "interrupts", "config.gz", "sys/kernel/random/boot_id"}
	procMaskedDirs   = []string{"acpi", "scsi", "asound", "fs"}
	procReadOnlyDirs = []string{"sys"}
)

// Device nodes bound from the host into the private /dev.
var rootDevices = []string{"null", "zero", "full", "random", "urandom"}

// mountPlan is what the helper mounts, in the helper's mount namespace.
type mountPlan struct {
	// workspace is a detached mount of the workspace (from the host when
	// it is idmapped, else cloned by the helper).
	workspace int
	// readOnly are detached read-only mounts of Spec.ReadOnly, in order;
	// readOnlyPaths their paths (the same inside as on the host).
	readOnly      []int
	readOnlyPaths []string
	// etc is a detached read-only mount of the runner's /etc snapshot
	// (see etc_linux.go); etcDirs the host /etc folders bound onto it.
	etc        int
	etcDirs    []string
	diskBytes  int64
	diskInodes int64
	// newRoot is where the new root is assembled before pivot_root.
	newRoot string
}

// buildRoot assembles the private root and enters it. Every error names
// the path it concerns.
func buildRoot(p mountPlan) error {
	nr := p.newRoot
	if err := unix.Mount("tmpfs", nr, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=4m,nr_inodes=4096"); err != nil {
		return fmt.Errorf("mount the new root's tmpfs on %s: %w", nr, err)
	}
	at := func(p string) string { return filepath.Join(nr, p) }

	for _, d := range rootSystemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return fmt.Errorf("read link %s: %w", d, err)
			}
			if err := os.Symlink(target, at(d)); err != nil {
				return fmt.Errorf("link %s: %w", d, err)
			}
		case fi.IsDir():
			if err := bindReadOnly(d, at(d), true); err != nil {
				return err
			}
		}
	}
	if err := attach(p.etc, at("etc"), true, 0); err != nil {
		return fmt.Errorf("mount /etc: %w", err)
	}
	for _, d := range p.etcDirs {
		if err := bindReadOnly(filepath.Join("/etc", d), at("etc/"+d), true); err != nil {
			return err
		}
	}
	if err := buildDev(at("dev"), p.diskBytes, p.diskInodes); err != nil {
		return err
	}
	if err := mountScratch(at("tmp"), p.diskBytes, p.diskInodes); err != nil {
		return err
	}
	if err := os.MkdirAll(at("var"), 0o755); err != nil {
		return fmt.Errorf("create /var: %w", err)
	}
	if err := os.Symlink("../tmp", at("var/tmp")); err != nil {
		return fmt.Errorf("link /var/tmp: %w", err)
	}
	if err := attach(p.workspace, at(WorkspaceDir), true, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); err != nil {
		return fmt.Errorf("mount the workspace at %s: %w", WorkspaceDir, err)
	}
	for i, fd := range p.readOnly {
		dst := at(p.readOnlyPaths[i])
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("Spec.ReadOnly[%d] %s: %w", i, p.readOnlyPaths[i], err)
		}
		if err := attach(fd, dst, st.Mode&unix.S_IFMT == unix.S_IFDIR, 0); err != nil {
			return fmt.Errorf("mount Spec.ReadOnly[%d] %s: %w", i, p.readOnlyPaths[i], err)
		}
	}
	// /proc last: masking uses the private /dev/null.
	if err := mountProc(at("proc"), at("dev/null")); err != nil {
		return err
	}
	if err := unix.Mount("", nr, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("make the new root read-only: %w", err)
	}
	return enterRoot(nr)
}

// enterRoot makes nr the root and detaches the old one, so nothing of the
// host's mount tree stays reachable.
func enterRoot(nr string) error {
	if err := unix.Chdir(nr); err != nil {
		return fmt.Errorf("enter the new root: %w", err)
	}
	// pivot_root(".", ".") stacks the old root on top of the new one;
	// unmounting "." then drops it.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}
	return nil
}

// bindReadOnly binds host path src at dst (created), read-only, nosuid and
// nodev, recursively.
func bindReadOnly(src, dst string, dir bool) error {
	if err := mountPoint(dst, dir); err != nil {
		return err
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("make %s read-only: %w", src, err)
	}
	return nil
}

// attach moves the detached mount fd onto dst (created), adding attrs.
func attach(fd int, dst string, dir bool, attrs uint64) error {
	if err := mountPoint(dst, dir); err != nil {
		return err
	}
	if attrs != 0 {
		attr := unix.MountAttr{Attr_set: attrs}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("set mount flags: %w", err)
		}
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return unix.Close(fd)
}

// mountPoint creates dst (a directory, or an empty file) and its parents.
func mountPoint(dst string, dir bool) error {
	if dir {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("create mount point %s: %w", dst, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create mount point %s: %w", dst, err)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		if _, serr := os.Stat(dst); serr == nil {
			return nil // exists already (inside a read-only system directory)
		}
		return fmt.Errorf("create mount point %s: %w", dst, err)
	}
	return f.Close()
}

// buildDev makes a minimal /dev: the harmless device nodes of the host, the
// usual links, and a private /dev/shm.
func buildDev(dev string, diskBytes, diskInodes int64) error {
	if err := os.Mkdir(dev, 0o755); err != nil {
		return fmt.Errorf("create /dev: %w", err)
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, d := range rootDevices {
		dst := filepath.Join(dev, d)
		if err := mountPoint(dst, false); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+d, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", d, err)
		}
		// Only the bind's flags may be added to in a user namespace.
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC}
		if err := unix.MountSetattr(unix.AT_FDCWD, dst, 0, &attr); err != nil {
			return fmt.Errorf("set flags of /dev/%s: %w", d, err)
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("link /dev/%s: %w", name, err)
		}
	}
	if err := mountScratch(filepath.Join(dev, "shm"), diskBytes, diskInodes); err != nil {
		return err
	}
	if err := unix.Mount("", dev, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("make /dev read-only: %w", err)
	}
	return nil
}

// mountScratch mounts a private, bounded tmpfs at dst (created).
func mountScratch(dst string, bytes, inodes int64) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	opts := "mode=1777,size=" + strconv.FormatInt(bytes, 10) + ",nr_inodes=" + strconv.FormatInt(inodes, 10)
	if err := unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs at %s: %w", dst, err)
	}
	return nil
}

// mountProc mounts a /proc of the sandbox's PID namespace at dst and masks
// the kernel-wide files in it.
func mountProc(dst, devNull string) error {
	if err := os.Mkdir(dst, 0o555); err != nil {
		return fmt.Errorf("create /proc: %w", err)
	}
	if err := unix.Mount("proc", dst, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	// /proc/sys first: a mask inside it must not take on its nodev.
	for _, d := range procReadOnlyDirs {
		p := filepath.Join(dst, d)
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("bind /proc/%s: %w", d, err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("make /proc/%s read-only: %w", d, err)
		}
	}
	// What this kernel lacks (ENOENT) needs no mask.
	for _, f := range procMaskedFiles {
		if err := unix.Mount(devNull, filepath.Join(dst, f), "", unix.MS_BIND, ""); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("mask /proc/%s: %w", f, err)
		}
	}
	for _, d := range procMaskedDirs {
		err := unix.Mount("tmpfs", filepath.Join(dst, d), "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,nr_inodes=2,mode=0555")
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("mask /proc/%s: %w", d, err)
		}
	}
	return nil
}

// cloneTree returns a detached copy of the mount tree at path (recursive),
// opened without following a final symlink.
func cloneTree(path string, readOnly bool) (int, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return -1, err
	}
	if readOnly {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}
