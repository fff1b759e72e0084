package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The suite runs twice when started as root: once as root, then again as
// an unprivileged uid (unprivUID), so that every guarantee is shown for
// both kinds of runner. For the second run, root provisions what an
// operator would give an unprivileged runner: delegated pids and memory
// cgroups and one bounded directory for the disk tests.
const (
	unprivUID = 64123
	unprivGID = 64123
	// Environment of the unprivileged re-run.
	envUnpriv        = "SKILLKIT_TEST_UNPRIVILEGED"
	envPidsCgroup    = "SKILLKIT_TEST_PIDS_CGROUP"
	envMemoryCgroup  = "SKILLKIT_TEST_MEMORY_CGROUP"
	envBoundedDir    = "SKILLKIT_TEST_BOUNDED_DIR"
	boundedDirBytes  = 64 << 20
	boundedDirInodes = 2000
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && os.Geteuid() == 0 && os.Getenv(envUnpriv) == "" && !benchmarking() {
		code = rerunUnprivileged()
	}
	os.Exit(code)
}

// benchmarking reports whether benchmarks were asked for; they run once.
func benchmarking() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.bench=") || strings.HasPrefix(a, "-test.fuzz=") {
			return true
		}
	}
	return false
}

// rerunUnprivileged runs this test binary again as unprivUID and returns
// its exit code.
func rerunUnprivileged() int {
	fmt.Printf("=== sandbox: re-running the suite as unprivileged uid %d\n", unprivUID)
	work, err := os.MkdirTemp("", "sandbox-unpriv-")
	if err != nil {
		return fail("temp dir: %v", err)
	}
	defer os.RemoveAll(work)
	if err := os.Chmod(work, 0o755); err != nil {
		return fail("chmod: %v", err)
	}
	// The go tool's build directory is private to root: copy the binary.
	bin := filepath.Join(work, "sandbox.test")
	if err := copyFile(os.Args[0], bin, 0o755); err != nil {
		return fail("copy test binary: %v", err)
	}
	// The package folder may lie under a folder the uid cannot enter
	// (a clone in /root): run from a copy of testdata.
	if err := copyTree("testdata", filepath.Join(work, "testdata")); err != nil {
		return fail("copy testdata: %v", err)
	}
	home := filepath.Join(work, "home")
	if err := mkdirOwned(home); err != nil {
		return fail("%v", err)
	}
	env := []string{envUnpriv + "=1", "HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=" + home}
	// Delegated cgroups (a v1 host here; on v2 the suite skips the
	// cgroup checks with a message).
	for _, c := range []struct{ root, env string }{{DefaultPidsCgroup, envPidsCgroup}, {DefaultMemoryCgroup, envMemoryCgroup}} {
		dir := filepath.Join(c.root, "skillkit-test-unpriv-"+strconv.Itoa(os.Getpid()))
		if err := os.Mkdir(dir, 0o755); err != nil {
			fmt.Printf("=== sandbox: no delegated cgroup under %s (%v); cgroup checks will skip\n", c.root, err)
			continue
		}
		defer func() { _ = removeCgroup(dir) }()
		if err := chownTree(dir); err != nil {
			return fail("delegate %s: %v", dir, err)
		}
		env = append(env, c.env+"="+dir)
	}
	bounded := filepath.Join(work, "bounded")
	if err := mkdirOwned(bounded); err != nil {
		return fail("%v", err)
	}
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700,uid=%d,gid=%d", boundedDirBytes, boundedDirInodes, unprivUID, unprivGID)
	if err := unix.Mount("tmpfs", bounded, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fail("mount the bounded directory: %v", err)
	}
	defer func() { _ = unix.Unmount(bounded, unix.MNT_DETACH) }()
	env = append(env, envBoundedDir+"="+bounded)

	cmd := exec.Command(bin, passArgs(os.Args[1:])...)
	cmd.Dir = work
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivUID, Gid: unprivGID, Groups: []uint32{}}}
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return fail("run: %v", err)
	}
	return 0
}

// passArgs keeps the test flags that make sense for the re-run and drops
// the ones naming files only root may write.
func passArgs(args []string) []string {
	var out []string
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "test.testlogfile", "test.coverprofile", "test.gocoverdir", "test.outputdir",
			"test.cpuprofile", "test.memprofile", "test.blockprofile", "test.mutexprofile", "test.trace":
			continue
		}
		out = append(out, a)
	}
	return out
}

func fail(format string, a ...any) int {
	fmt.Printf("=== sandbox: unprivileged re-run: "+format+"\n", a...)
	return 1
}

func mkdirOwned(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	return os.Chown(dir, unprivUID, unprivGID)
}

// chownTree gives dir and the files in it to the unprivileged uid, as
// cgroup delegation does.
func chownTree(dir string) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, unprivUID, unprivGID)
	})
}

// copyTree copies the folder src to dst, world-readable.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		return copyFile(p, target, 0o644)
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// unprivileged reports whether this is the unprivileged re-run (or a run
// started by a non-root user).
func unprivileged() bool { return os.Geteuid() != 0 }

// testIsolatedOptions returns the options the tests use for an isolated
// runner: as root the defaults; unprivileged, the delegated cgroups when
// provisioned and UnboundedDisk (only root can make bounded workspaces;
// the disk tests use the provisioned bounded directory instead).
func testIsolatedOptions(grace time.Duration) *IsolatedOptions {
	o := &IsolatedOptions{KillGrace: grace, Logger: discardLogger()}
	if unprivileged() {
		o.UnboundedDisk = true
		o.PidsCgroup = os.Getenv(envPidsCgroup)
		o.MemoryCgroup = os.Getenv(envMemoryCgroup)
	}
	return o
}

// testWorkspace returns a fresh workspace directory the isolated runner
// accepts: as root a small bounded tmpfs; unprivileged a plain directory
// (the runner then has UnboundedDisk).
func testWorkspace(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if unprivileged() {
		return dir
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=256m,nr_inodes=20000,mode=0700"); err != nil {
		t.Fatalf("mount a bounded test workspace: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// boundedWorkspace returns a bounded directory of boundedDirBytes and
// boundedDirInodes: a fresh tmpfs as root, the provisioned one
// unprivileged (emptied first).
func boundedWorkspace(t *testing.T) string {
	t.Helper()
	if !unprivileged() {
		dir := t.TempDir()
		opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700", boundedDirBytes, boundedDirInodes)
		if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			t.Fatalf("mount a bounded workspace: %v", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
		return dir
	}
	dir := os.Getenv(envBoundedDir)
	if dir == "" {
		t.Skip("no bounded directory: an unprivileged user cannot mount one; run the suite as root, which provisions it")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	t.Cleanup(func() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	})
	return dir
}
