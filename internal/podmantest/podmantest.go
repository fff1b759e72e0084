//go:build linux

// Package podmantest starts a rootful Podman serving the Docker Engine
// API on a socket of its own, with its own storage and a test image built
// from the host's static busybox, for the tests of the container runner
// and of the commands that use it. Tests skip, naming what is missing,
// where Podman cannot run.
package podmantest

import (
	"archive/tar"
	"bufio"
	"cmp"
	"context"
	"debug/elf"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/internal/proctest"
)

// Env is a rootful Podman serving the Docker Engine API on a socket
// of its own, with its own storage holding one test image.
type Env struct {
	// Socket is the engine's unix socket.
	Socket string
	// Image is the test Image: a static busybox with its applets, nobody,
	// and /tmp 1777.
	Image  string
	podman string
	flags  []string // the global flags that select this storage
}

// The image the tests run in: a static busybox with its applets, nobody,
// and /tmp 1777.
const TestImage = "localhost/skillkit-container-test:busybox"

// Start starts `podman system service` for the test, with its
// storage in a temporary folder, and imports the test image built from the
// host's static busybox; everything is stopped and removed when the test
// ends. It skips when Podman cannot run here, naming what is missing.
func Start(t testing.TB) *Env {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("podman cannot be started as uid %d: the container suite runs rootful Podman, in the root pass of the suite", os.Geteuid())
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman not found: apt-get install podman runc (.ci/run installs it)")
	}
	// runc is what works everywhere here (REFERENCE §6);
	// SKILLKIT_TEST_OCI_RUNTIME=crun measures the faster runtime.
	oci := cmp.Or(os.Getenv("SKILLKIT_TEST_OCI_RUNTIME"), "runc")
	if _, err := exec.LookPath(oci); err != nil {
		t.Skipf("%s not found: apt-get install podman %s (.ci/run installs it)", oci, oci)
	}
	busybox := staticBusybox()
	if busybox == "" {
		t.Skip("a static busybox not found (the test image is built from it): apt-get install busybox-static (.ci/setup-podman installs it)")
	}
	// Podman refuses a runroot path of more than 50 characters, which
	// t.TempDir's (named for the test) can exceed.
	base := os.TempDir()
	if len(base) > 20 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "podman-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	env := &Env{
		Socket: filepath.Join(dir, "podman.sock"),
		Image:  TestImage,
		podman: podman,
		flags: []string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--tmpdir", filepath.Join(dir, "tmp"),
			"--runtime", oci, "--cgroup-manager", "cgroupfs", "--events-backend", "file"},
	}
	// Whatever happens next, the storage's mounts go before the folder,
	// once no process of this storage is left: conmon stays 5 minutes
	// after each exec (Podman's exit delay) and then runs `podman
	// container cleanup`, which would mount the storage again.
	t.Cleanup(func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			left := proctest.WithArg(dir)
			if len(left) == 0 {
				break
			}
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(10 * time.Millisecond)
		}
		unmountUnder(dir)
	})

	tarball := filepath.Join(dir, "image.tar")
	if err := writeBusyboxImage(busybox, tarball); err != nil {
		t.Fatalf("build the test Image: %v", err)
	}
	if out, err := env.CLI("import", tarball, env.Image); err != nil {
		t.Skipf("podman cannot import an image here: %v\n%s", err, out)
	}

	logf, err := os.Create(filepath.Join(dir, "service.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(podman, append(append([]string{}, env.flags...), "system", "service", "--time=0", "unix://"+env.Socket)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// conmon, started by the service, writes files such as "oom" in its
	// working directory: keep them out of the package folder.
	cmd.Dir = dir
	// The service must not outlive the test binary: the parent-death
	// signal follows the thread that forks, so fork from a thread that
	// lives exactly as long as the service. SIGTERM lets it unmount its
	// storage as it goes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	started, exited := make(chan error, 1), make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the service
		defer close(exited)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		t.Skipf("podman system service cannot start: %v", err)
	}
	t.Cleanup(func() {
		// Containers a test left behind, then the service.
		_, _ = env.CLI("rm", "--all", "--force", "--time", "0")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		err := ping(env.Socket)
		if err == nil {
			break
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logf.Name())
			t.Skipf("podman system service ended at once: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("podman system service did not answer within 30s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return env
}

// CLI runs podman with env's storage.
func (e *Env) CLI(args ...string) ([]byte, error) {
	cmd := exec.Command(e.podman, append(append([]string{}, e.flags...), args...)...)
	cmd.Dir = filepath.Dir(e.Socket)
	return cmd.CombinedOutput()
}

// staticBusybox returns the path of a statically linked busybox, or "".
func staticBusybox() string {
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		static := true
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				static = false
			}
		}
		f.Close()
		if static {
			return p
		}
	}
	return ""
}

// writeBusyboxImage writes a root file system tarball: busybox and a link
// per applet in /bin, /etc/passwd and /etc/group with nobody, /tmp 1777.
func writeBusyboxImage(busybox, out string) error {
	list, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return fmt.Errorf("%s --list: %w", busybox, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	now := time.Unix(1_700_000_000, 0)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: now})
	}
	file := func(name string, mode int64, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(b)), ModTime: now}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	for _, d := range []string{"bin", "etc", "proc", "sys", "dev", "workspace", "usr", "usr/bin"} {
		if err := dir(d, 0o755); err != nil {
			return err
		}
	}
	if err := dir("tmp", 0o1777); err != nil {
		return err
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return err
	}
	if err := file("bin/busybox", 0o755, bb); err != nil {
		return err
	}
	sc := bufio.NewScanner(strings.NewReader(string(list)))
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if name == "" || name == "busybox" || strings.Contains(name, "/") {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + name, Linkname: "busybox", Mode: 0o777, ModTime: now}); err != nil {
			return err
		}
	}
	if err := file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n")); err != nil {
		return err
	}
	if err := file("etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n")); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// unmountUnder detaches every mount below dir (Podman's storage leaves
// its overlay folder mounted on itself), deepest first.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			points = append(points, f[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	for _, p := range points {
		_ = unix.Unmount(p, unix.MNT_DETACH)
	}
}

// ping asks the engine at socket for /_ping.
func ping(socket string) error {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		}}}
	resp, err := client.Get("http://engine/_ping")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/_ping: %s", resp.Status)
	}
	return nil
}
