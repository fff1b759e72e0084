//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillkit/skillkit/internal/proctest"
	"golang.org/x/sys/unix"
)

// The tests in this file reproduce the findings of the hostile-script
// review of the isolated runner, each as a real process, and assert that
// the runner now holds; under the unconfined local runner they assert the
// unprotected outcome. TestMain runs them again as an unprivileged uid.

// bothModes runs f under the isolated and the local runner.
func bothModes(t *testing.T, f func(t *testing.T, mode string, r Runner)) {
	for _, mode := range []string{modeIsolated, modeLocal} {
		t.Run(mode, func(t *testing.T) { f(t, mode, newTestRunner(t, mode, 300*time.Millisecond)) })
	}
}

// lines parses "<key> <value...>" output lines.
func lines(out []byte) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, " ")
		m[k] = v
	}
	return m
}

// C1: chmod (setuid included), utimes and xattrs on a host file.
func TestConfineHostFileMetadata(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		f := filepath.Join(t.TempDir(), "host-file")
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Stat(f)
		res, err, _ := hostileRun(t, r, "host_meta.py", []string{f}, Spec{})
		mustOK(t, res, err)
		after, _ := os.Stat(f)
		changed := after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime())
		wantLeak(t, mode, changed, res)
		if mode == modeIsolated {
			for op, got := range lines(res.Stdout) {
				if got != "ENOENT" && !(op == "chmod_suid" && got == "EPERM") {
					t.Errorf("isolated: %s on a host path: %s, want ENOENT (the path must not exist inside)", op, got)
				}
			}
		}
	})
}

// C1: a setuid copy of a binary in the workspace.
func TestConfineSetuidInWorkspace(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		res, err, ws := hostileRun(t, r, "setuid_copy.sh", nil, Spec{})
		mustOK(t, res, err)
		suid := false
		for _, name := range []string{"suid-id", "suid-id2"} {
			if fi, err := os.Stat(filepath.Join(ws, name)); err == nil && fi.Mode()&os.ModeSetuid != 0 {
				suid = true
			}
		}
		wantLeak(t, mode, suid, res)
		if mode == modeIsolated && !bytes.Contains(res.Stderr, []byte("Operation not permitted")) {
			t.Errorf("isolated: chmod 4755 should fail with EPERM; stderr %q", res.Stderr)
		}
	})
}

// C2: a path UNIX socket of the host, and one in another sandbox's
// workspace.
func TestConfineUnixSockets(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		dir := filepath.Join(t.TempDir(), "svc")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(dir, "host.sock")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		_ = os.Chmod(sock, 0o600)
		got := make(chan []byte, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			b := make([]byte, 16)
			n, _ := c.Read(b)
			got <- b[:n]
		}()
		res, err, _ := hostileRun(t, r, "unix_connect.py", []string{sock}, Spec{})
		mustOK(t, res, err)
		wantLeak(t, mode, received(mode, got), res)
		if mode == modeIsolated && !bytes.Contains(res.Stdout, []byte("connect failed ENOENT")) {
			t.Errorf("isolated: want ENOENT for the host socket path, got %q %q", res.Stdout, res.Stderr)
		}
	})
	t.Run("between sandboxes", func(t *testing.T) {
		r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
		wsA := testWorkspace(t)
		done := make(chan *Result, 1)
		go func() {
			res, err, _ := hostileRun(t, r, "unix_listen.py", []string{"3"}, Spec{Workspace: wsA})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		sockA := filepath.Join(wsA, "listen.sock")
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(sockA); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("sandbox A never created its socket")
			}
		}
		resB, err, _ := hostileRun(t, r, "unix_connect.py", []string{sockA}, Spec{})
		mustOK(t, resB, err)
		resA := <-done
		if !bytes.Contains(resB.Stdout, []byte("connect failed ENOENT")) || resA == nil || !bytes.Contains(resA.Stdout, []byte("nobody connected")) {
			t.Errorf("sandbox B reached A's socket: B %q %q, A %v", resB.Stdout, resB.Stderr, resA)
		}
	})
}

// M1: descriptors the host process leaks (no CLOEXEC), a terminal among
// them.
func TestConfineInheritedDescriptors(t *testing.T) {
	const secret = "fd-secret-5e1a"
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		dir := t.TempDir()
		secretFile, appendFile := filepath.Join(dir, "secret"), filepath.Join(dir, "append")
		if err := os.WriteFile(secretFile, []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(appendFile, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		leakFD(t, secretFile, os.O_RDONLY, 77)
		leakFD(t, appendFile, os.O_WRONLY|os.O_APPEND, 78)
		res, err, _ := hostileRun(t, r, "fd_leak.sh", []string{"77", "78"}, Spec{})
		mustOK(t, res, err)
		appended, _ := os.ReadFile(appendFile)
		leaked := bytes.Contains(res.Stdout, []byte(secret)) || len(appended) > 0
		wantLeak(t, mode, leaked, res)
		if mode == modeIsolated {
			fds := strings.Fields(strings.SplitN(string(res.Stdout), "\n", 2)[0])
			if len(fds) > 4 { // 0, 1, 2 and the one ls opened for /proc/self/fd
				t.Errorf("isolated: the command has descriptors %v, want only 0 1 2 (and ls's own)", fds)
			}
		}
	})
	t.Run("terminal", func(t *testing.T) {
		r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
		ptmx, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			t.Skipf("no pseudo-terminal: %v", err)
		}
		defer unix.Close(ptmx)
		if err := unix.Dup3(ptmx, 79, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(79) })
		// fd 79 is not there (see above) and TIOCSTI is refused before
		// the descriptor is even looked at; a pipe alone would say
		// ENOTTY.
		for _, fd := range []string{"79", "0"} {
			res, err, _ := hostileRun(t, r, "tiocsti.py", []string{fd}, Spec{})
			mustOK(t, res, err)
			if got := strings.TrimSpace(string(res.Stdout)); got != "EPERM" {
				t.Errorf("TIOCSTI on fd %s: %q (stderr %q), want EPERM", fd, got, res.Stderr)
			}
		}
	})
}

// leakFD opens path and places it at descriptor fd without close-on-exec,
// as a careless parent process would.
func leakFD(t *testing.T, path string, flag, fd int) {
	t.Helper()
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Dup3(int(f.Fd()), fd, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
}

// M2: the host's session keyring.
func TestConfineKeyring(t *testing.T) {
	// The key goes into the keyring a child finds as its session keyring
	// without creating one. Asking AddKey for KEY_SPEC_SESSION_KEYRING
	// when the process has none would create one on the calling thread
	// only (keyrings live in per-thread credentials), and a runner
	// forking from another thread would then not see the key.
	ring, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	if err != nil {
		t.Skipf("this process has no session or user-session keyring: %v", err)
	}
	id, err := unix.AddKey("user", "skillkit-test-planted", []byte("keyring-secret"), ring)
	if err != nil {
		t.Skipf("cannot add a key to this process's session keyring: %v", err)
	}
	t.Cleanup(func() { _, _ = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0) })
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		res, err, _ := hostileRun(t, r, "keyring.py", nil, Spec{})
		mustOK(t, res, err)
		wantLeak(t, mode, bytes.Contains(res.Stdout, []byte("skillkit-test-planted")), res)
		if mode == modeIsolated {
			got := lines(res.Stdout)
			if got["keyctl_read"] != "EPERM" || got["add_key"] != "EPERM" || got["proc_keys"] != "''" {
				t.Errorf("isolated: %q, want keyctl and add_key EPERM and an empty /proc/keys", res.Stdout)
			}
		}
	})
}

// M4: memory of all processes together.
func TestConfineMemory(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	requireCgroups(t, r)
	const limit = 128 << 20
	t.Run("past the limit", func(t *testing.T) {
		// Each process alone fits; together they do not.
		res, err, _ := hostileRun(t, r, "memory_procs.py", []string{"4", "48"}, Spec{Limits: Limits{Memory: limit}})
		mustOK(t, res, err)
		if !res.OOMKilled || bytes.Contains(res.Stdout, []byte("held 4 of 4")) {
			t.Errorf("OOMKilled %v stdout %q, want a process killed at the memory bound", res.OOMKilled, res.Stdout)
		}
	})
	t.Run("within the limit", func(t *testing.T) {
		res, err, _ := hostileRun(t, r, "memory_procs.py", []string{"2", "24"}, Spec{Limits: Limits{Memory: limit}})
		mustOK(t, res, err)
		if res.OOMKilled || !bytes.Contains(res.Stdout, []byte("held 2 of 2")) {
			t.Errorf("OOMKilled %v stdout %q stderr %q, want both to fit", res.OOMKilled, res.Stdout, res.Stderr)
		}
	})
}

// requireCgroups skips when the runner has no cgroups (an unprivileged
// run without delegated ones).
func requireCgroups(t *testing.T, r Runner) {
	t.Helper()
	if iso, ok := r.(*isolated); ok && iso.cgroups == nil {
		t.Skip("no writable pids and memory cgroups for this user")
	}
}

// boundedRunner returns an isolated runner that refuses unbounded
// workspaces.
func boundedRunner(t *testing.T) Runner {
	t.Helper()
	o := testIsolatedOptions(300 * time.Millisecond)
	o.UnboundedDisk = false
	r, err := NewIsolated(o)
	var fe *FeatureError
	if errors.As(err, &fe) {
		t.Skipf("isolated runner needs host feature %q: %v", fe.Feature, fe.Err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// M5: bytes and inodes of the workspace and of /tmp.
func TestConfineDisk(t *testing.T) {
	r := boundedRunner(t)
	limits := Limits{DiskBytes: boundedDirBytes, DiskInodes: boundedDirInodes}
	cases := []struct {
		name, cwd      string
		files, kib     string
		full, diskFull bool
	}{
		{"bytes past the limit", "", "200", "1024", true, true},
		{"inodes past the limit", "", "5000", "0", true, true},
		{"within the limits", "", "10", "1024", false, false},
		{"tmp bytes past the limit", "/tmp", "200", "1024", true, true},
		{"tmp inodes past the limit", "/tmp", "5000", "0", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := boundedWorkspace(t)
			script := "disk_files.sh"
			src, _ := os.ReadFile(filepath.Join("testdata", "hostile", script))
			if err := os.WriteFile(filepath.Join(ws, script), src, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := "sh " + WorkspaceDir + "/" + script + " " + tc.files + " " + tc.kib
			if tc.cwd != "" {
				cmd = "cd " + tc.cwd + " && " + cmd
			}
			res, err := r.Run(context.Background(), Spec{Args: []string{"/bin/sh", "-c", cmd}, Workspace: ws, Limits: limits})
			mustOK(t, res, err)
			full := bytes.Contains(res.Stdout, []byte("failed at")) && bytes.Contains(res.Stdout, []byte("No space left"))
			if full != tc.full || res.DiskLimit != tc.diskFull {
				t.Errorf("write failed with ENOSPC = %v, DiskLimit = %v; want %v, %v\nstdout %q", full, res.DiskLimit, tc.full, tc.diskFull, res.Stdout)
			}
		})
	}
	t.Run("unbounded workspace refused", func(t *testing.T) {
		res, err := r.Run(context.Background(), Spec{Args: []string{"/bin/true"}, Workspace: t.TempDir()})
		if !errors.Is(err, ErrUnboundedDisk) || res != nil || !strings.Contains(err.Error(), "UnboundedDisk") {
			t.Fatalf("err = %v, want ErrUnboundedDisk naming the opt-in", err)
		}
	})
	t.Run("workspace larger than the limits refused", func(t *testing.T) {
		ws := boundedWorkspace(t)
		_, err := r.Run(context.Background(), Spec{Args: []string{"/bin/true"}, Workspace: ws,
			Limits: Limits{DiskBytes: boundedDirBytes / 2, DiskInodes: boundedDirInodes}})
		if !errors.Is(err, ErrUnboundedDisk) {
			t.Fatalf("err = %v, want ErrUnboundedDisk", err)
		}
	})
}

// M5 on a real volume (ext4 on a loop device, idmapped into the sandbox).
func TestConfineDiskVolume(t *testing.T) {
	if unprivileged() {
		t.Skip("NewVolume needs root")
	}
	r := boundedRunner(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	v, err := NewVolume(context.Background(), ws, filepath.Join(dir, "ws.img"), &VolumeOptions{Bytes: 32 << 20, Inodes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Remove() })
	src, _ := os.ReadFile(filepath.Join("testdata", "hostile", "disk_files.sh"))
	if err := os.WriteFile(filepath.Join(ws, "disk_files.sh"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"100", "1024"}, {"2000", "0"}} {
		res, err := r.Run(context.Background(), Spec{Args: append([]string{"/bin/sh", "disk_files.sh"}, args...), Workspace: ws,
			Limits: Limits{DiskBytes: 32 << 20, DiskInodes: 1000}})
		mustOK(t, res, err)
		if !bytes.Contains(res.Stdout, []byte("No space left")) || !res.DiskLimit {
			t.Errorf("%v: stdout %q DiskLimit %v, want ENOSPC and DiskLimit", args, res.Stdout, res.DiskLimit)
		}
		// Files the command made belong to the host's owner of the
		// workspace (the idmapped mount stores the sandbox uid as it).
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(ws, "f0"), &st); err != nil || st.Uid != uint32(os.Getuid()) {
			t.Errorf("a file the command made is owned by uid %d (%v), want the host's %d", st.Uid, err, os.Getuid())
		}
		_ = exec.Command("/bin/sh", "-c", "rm -f "+ws+"/f*").Run()
	}
}

// L1: metadata of host paths, kernel-wide /proc files.
func TestConfineHostView(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		host := filepath.Join(t.TempDir(), "host-file")
		if err := os.WriteFile(host, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		res, err, _ := hostileRun(t, r, "host_view.sh", []string{host}, Spec{})
		mustOK(t, res, err)
		wantLeak(t, mode, bytes.Contains(res.Stdout, []byte("visible "+host)), res)
		if mode != modeIsolated {
			return
		}
		for _, bad := range []string{"visible", "mountinfo shows the host path"} {
			if bytes.Contains(res.Stdout, []byte(bad)) {
				t.Errorf("isolated: %q in\n%s", bad, res.Stdout)
			}
		}
		for _, want := range []string{"keys=[]", "cmdline=[]", "cgroup=[]", "diskstats=[]", "partitions=[]",
			"locks=[]", "interrupts=[]", "sys/kernel/random/boot_id=[]"} {
			if !bytes.Contains(res.Stdout, []byte(want)) {
				t.Errorf("isolated: want %q in\n%s", want, res.Stdout)
			}
		}
	})
}

// L3: a deadline at any moment, including while the helper starts. sleep
// dies of SIGTERM at once, so the result must be 143 every time: 137 would
// mean the SIGTERM was lost and only the SIGKILL after the (generous)
// grace ended the call.
func TestConfineDeadlines(t *testing.T) {
	for _, mode := range []string{modeIsolated, modeLocal} {
		t.Run(mode, func(t *testing.T) { confineDeadlines(t, mode, newTestRunner(t, mode, 2*time.Second)) })
	}
}

func confineDeadlines(t *testing.T, mode string, r Runner) {
	{
		ws := testWorkspace(t)
		for _, d := range []time.Duration{1, time.Microsecond, 100 * time.Microsecond, time.Millisecond, 2 * time.Millisecond,
			5 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond} {
			for i := 0; i < 3; i++ {
				res, err := r.Run(context.Background(), Spec{Args: []string{"/bin/sleep", "10"}, Workspace: ws, Timeout: d})
				if err != nil || res == nil {
					t.Fatalf("timeout %v: err %v", d, err)
				}
				if !res.TimedOut || res.ExitCode != 143 || res.Signal != int(syscall.SIGTERM) {
					t.Errorf("%s, timeout %v: timed_out %v exit %d signal %d, want timed_out with 143/SIGTERM", mode, d, res.TimedOut, res.ExitCode, res.Signal)
				}
			}
		}
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		res, err := r.Run(ctx, Spec{Args: []string{"/bin/sleep", "10"}, Workspace: ws})
		if !errors.Is(err, context.DeadlineExceeded) || res == nil || !res.TimedOut || res.ExitCode != 143 {
			t.Errorf("expired context: res %+v err %v, want timed_out 143 and the context's error", res, err)
		}
	}
}

// envCrashVictim makes the test binary a host process that is killed -9
// while its sandbox runs.
const envCrashVictim = "SKILLKIT_TEST_CRASH_VICTIM"

// L4: kill -9 of the host process.
func TestConfineCrashLeftovers(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	iso := r.(*isolated)
	marker := "27.18" + strconv.Itoa(os.Getpid())
	ws := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashVictim$")
	cmd.Env = append(os.Environ(), envCrashVictim+"="+marker, "SKILLKIT_TEST_CRASH_WS="+ws)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lineCh := make(chan string, 1)
	go func() { l, _ := bufio.NewReader(out).ReadString('\n'); lineCh <- l }()
	var line string
	select {
	case line = <-lineCh:
	case <-time.After(time.Minute):
	}
	if strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("victim: %q", line)
	}
	start, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(start[bytes.LastIndexByte(start, ')')+1:]))
	prefix := cgroupPrefix + strconv.Itoa(cmd.Process.Pid) + "-" + fields[19] + "-"
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	// PDEATHSIG kills the helper, and with it (PID 1) the namespace.
	for deadline := time.Now().Add(10 * time.Second); len(proctest.WithArg(marker)) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sandbox processes %v survive the host's kill -9", proctest.WithArg(marker))
		}
	}
	if iso.cgroups == nil {
		t.Skip("no cgroups for this user: nothing to sweep")
	}
	leftovers := func() []string {
		var found []string
		for _, root := range []string{iso.cgroups.pids, iso.cgroups.memory, iso.cgroups.v2} {
			if root == "" {
				continue
			}
			entries, _ := os.ReadDir(root)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), prefix) {
					found = append(found, filepath.Join(root, e.Name()))
				}
			}
		}
		return found
	}
	if len(leftovers()) == 0 {
		t.Fatal("the killed host left no cgroup: the test did not reproduce the crash")
	}
	newTestRunner(t, modeIsolated, 300*time.Millisecond) // the next run sweeps
	if left := leftovers(); len(left) != 0 {
		t.Errorf("a new runner did not sweep the dead host's cgroups %v", left)
	}
}

// TestCrashVictim is the host process TestConfineCrashLeftovers kills.
func TestCrashVictim(t *testing.T) {
	marker := os.Getenv(envCrashVictim)
	if marker == "" {
		t.Skip("only run by TestConfineCrashLeftovers")
	}
	o := testIsolatedOptions(time.Second)
	o.UnboundedDisk = true // its workspace outlives it; no mount to leak
	r, err := NewIsolated(o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(context.Background(), Spec{Args: []string{"/bin/sleep", "1000", marker}, Workspace: os.Getenv("SKILLKIT_TEST_CRASH_WS")})
		done <- err
	}()
	for len(proctest.WithArg(marker)) == 0 {
		select {
		case err := <-done:
			fmt.Println("failed:", err)
			os.Exit(1)
		case <-time.After(2 * time.Millisecond):
		}
	}
	fmt.Println("ready")
	select {}
}

// Nested user namespaces and the rest of the seccomp deny list.
func TestConfineSeccomp(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	res, err, _ := hostileRun(t, r, "syscalls.py", nil, Spec{})
	mustOK(t, res, err)
	got := lines(res.Stdout)
	want := map[string]string{
		"io_uring_setup": "EPERM", "userfaultfd": "EPERM", "perf_event_open": "EPERM", "bpf": "EPERM",
		"keyctl": "EPERM", "add_key": "EPERM", "request_key": "EPERM",
		"unshare_user": "EPERM", "unshare_net": "EPERM", "setns": "EPERM", "clone_newuser": "EPERM", "clone3": "ENOSYS",
		"mount": "EPERM", "umount2": "EPERM", "pivot_root": "EPERM", "fsopen": "EPERM", "open_tree": "EPERM",
		"move_mount": "EPERM", "mount_setattr": "EPERM",
		"ptrace_attach": "EPERM", "ptrace_peek": "EPERM", "process_vm_readv": "EPERM", "pidfd_getfd": "EPERM",
		"kexec_load": "EPERM", "init_module": "EPERM", "open_by_handle_at": "EPERM",
		"personality_rie": "EPERM", "personality_query": "ok",
		"acct": "EPERM", "swapon": "EPERM", "reboot": "EPERM", "syslog": "EPERM", "settimeofday": "EPERM",
		"clock_settime": "EPERM", "modify_ldt": "EPERM", "iopl": "EPERM", "fanotify_init": "EPERM", "openat2": "ENOSYS",
		"chmod_suid": "EPERM", "chmod_plain": "ok", "mkdir_sgid": "EPERM",
		"socket_af_unix": "ok", "socket_af_inet": "ok", "socket_af_inet6": "ok", "socket_netlink_route": "ok",
		"socket_netlink_audit": "EAFNOSUPPORT", "socket_af_packet": "EAFNOSUPPORT", "socket_af_vsock": "EAFNOSUPPORT",
		"socket_af_alg": "EAFNOSUPPORT", "socket_af_vsock_high": "EAFNOSUPPORT", "socket_af_bluetooth": "EAFNOSUPPORT",
		"tiocsti_high":    "EPERM",
		"socketpair_unix": "ok", "socketpair_inet": "EAFNOSUPPORT", "socketpair_vsock": "EAFNOSUPPORT",
		"socketpair_packet": "EAFNOSUPPORT", "socketpair_tipc": "EAFNOSUPPORT",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %s", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("script printed %d results, want %d:\n%s\nstderr %s", len(got), len(want), res.Stdout, res.Stderr)
	}
}

// A syscall through the i386 or x32 ABI kills the process.
func TestConfineForeignABI(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("only amd64 has second syscall ABIs (i386, x32) to try")
	}
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	for _, abi := range []string{"i386", "x32"} {
		res, err, _ := hostileRun(t, r, "foreign_abi.py", []string{abi}, Spec{})
		mustOK(t, res, err)
		if got := strings.TrimSpace(string(res.Stdout)); got != "killed by SIGSYS" {
			t.Errorf("%s syscall: %q (stderr %q), want the process killed by SIGSYS", abi, got, res.Stderr)
		}
	}
}

// The helper (PID 1 of the sandbox) keeps no capability in any thread and
// cannot be read or traced by the command.
func TestConfineHelperPrivileges(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	res := run(t, r, `for s in /proc/1/task/*/status; do grep -E '^(CapInh|CapPrm|CapEff|CapAmb)' $s; done
cat /proc/1/environ >/dev/null 2>&1 && echo "environ readable"
head -c1 /proc/1/mem >/dev/null 2>&1 && echo "mem readable"
grep -E '^(CapBnd|Seccomp|NoNewPrivs):' /proc/1/status`, Spec{})
	threads := 0
	for _, l := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd":
			if v != "0000000000000000" {
				t.Errorf("helper %s = %s, want none", k, v)
			}
			if k == "CapEff" {
				threads++
			}
		case "NoNewPrivs":
			if v != "1" {
				t.Errorf("the helper's main thread has NoNewPrivs %s", v)
			}
		case "Seccomp":
			if v != "2" {
				t.Errorf("the helper's main thread has Seccomp %s, want 2 (filter)", v)
			}
		default:
			t.Errorf("the command could read the helper: %q", l)
		}
	}
	if threads == 0 {
		t.Fatalf("no helper thread status read: %q %q", res.Stdout, res.Stderr)
	}
}

// L5: keys tool arguments may not set.
func TestToolEnvKeys(t *testing.T) {
	for _, k := range []string{"FOO", "my_var", "_X1", "SKILL_INPUT"} {
		if err := CheckToolEnvKey(k); err != nil {
			t.Errorf("%q refused: %v", k, err)
		}
	}
	for _, k := range []string{"", "1X", "A-B", "A\nB", "A=B", "A B", "ÄB", "PATH", "path", "HOME", "TMPDIR",
		"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_SSH_COMMAND", "PYTHONINSPECT", "PYTHONPATH", "OPENSSL_CONF",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "LD_PRELOAD", "LD_LIBRARY_PATH", "BASH_ENV", "BASHOPTS",
		"NODE_OPTIONS", "PERL5OPT", "PERLLIB", "RUBYOPT", "GCONV_PATH", "SKILLKIT_SANDBOX_HELPER", "CLASSPATH",
		"LUA_INIT", "PHPRC", "EDITOR", "SSL_CERT_FILE", "MALLOC_ARENA_MAX", "ZDOTDIR", "XDG_CONFIG_HOME",
		"GOFLAGS", "RUSTC_WRAPPER", "MAKEFILES", "CONFIG_SITE", "VIMINIT", "IPYTHONDIR", "DOTNET_STARTUP_HOOKS",
		"AWS_CONFIG_FILE", "KUBECONFIG", "HTTP_PROXY", "https_proxy", "ALL_PROXY", "NO_PROXY", "GTK_MODULES",
		"PIP_INDEX_URL", "NPM_TOKEN", "CARGO_HOME"} {
		err := CheckToolEnvKey(k)
		if !errors.Is(err, ErrForbiddenEnv) || !strings.Contains(err.Error(), strconv.Quote(k)) && k != "" {
			t.Errorf("%q: err %v, want ErrForbiddenEnv naming the key", k, err)
		}
	}
}

// Spec.ReadOnly may not cover the parts of the private root the runner
// makes itself.
func TestConfineReadOnlyReserved(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	ws := testWorkspace(t)
	for _, p := range []string{"/", "/tmp", WorkspaceDir, WorkspaceDir + "/x", "/proc", "/proc/1", "/dev", "/dev/shm", "/etc", "/etc/ssl"} {
		_, err := r.Run(context.Background(), Spec{Args: []string{"/bin/true"}, Workspace: ws, ReadOnly: []string{p}})
		if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "Spec.ReadOnly[0]") {
			t.Errorf("ReadOnly %q: err = %v, want ErrInvalidSpec naming Spec.ReadOnly[0]", p, err)
		}
	}
	// Below /tmp is fine: mounted over the private one.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "doc"), []byte("ro"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, r, "cat "+dir+"/doc", Spec{Workspace: ws, ReadOnly: []string{dir}})
	if string(res.Stdout) != "ro" {
		t.Errorf("a read-only path under /tmp: %q %q", res.Stdout, res.Stderr)
	}
}

// A command cannot make the helper (PID 1) die or dump its stacks with a
// signal.
func TestConfineSignalsToHelper(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	res, err, _ := hostileRun(t, r, "signal_pid1.sh", nil, Spec{})
	mustOK(t, res, err)
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "survived" || bytes.Contains(res.Stderr, []byte("goroutine")) {
		t.Errorf("exit %d stdout %q stderr %q: want the command to go on and no helper output", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// Per-user kernel counts the runner's uid is charged for (F3 of the
// review): inotify instances are capped per sandbox, and no namespace of
// any kind can be made inside.
func TestConfineNamespaceLimits(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	res, err, _ := hostileRun(t, r, "inotify_many.py", nil, Spec{})
	mustOK(t, res, err)
	got := lines(res.Stdout)
	if got["instances"] != "32 EMFILE" || got["user_ns_limit"] != "0" {
		t.Errorf("%q, want 32 inotify instances at most and max_user_namespaces 0", res.Stdout)
	}
	res = run(t, r, "grep -E 'SigPnd|^Sig' /proc/self/status >/dev/null; cat /proc/self/limits", Spec{})
	for _, want := range []string{"Max pending signals       1024", "Max msgqueue size         262144", "Max locked memory         8388608"} {
		if !bytes.Contains(res.Stdout, []byte(want)) {
			t.Errorf("missing %q in\n%s", want, res.Stdout)
		}
	}
}

// Spec.ReadOnly paths are shown as they are: a file only the host's owner
// may read stays unreadable.
func TestConfineReadOnlyPermissions(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "public"), []byte("public"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "private"), []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res := run(t, r, "cat "+dir+"/public; cat "+dir+"/private 2>/dev/null || echo ' refused'", Spec{ReadOnly: []string{dir}})
	// As root the command is another uid than the files' owner; as an
	// unprivileged runner it is the owner itself.
	want := "public refused\n"
	if unprivileged() {
		want = "publicprivate"
	}
	if string(res.Stdout) != want {
		t.Errorf("stdout %q, want %q", res.Stdout, want)
	}
}

// Concurrent calls of one runner do not share a network namespace.
func TestConfineNetworkNamespacePerCall(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 300*time.Millisecond)
	wsA := testWorkspace(t)
	done := make(chan *Result, 1)
	go func() {
		res, err := r.Run(context.Background(), Spec{Workspace: wsA, Timeout: 20 * time.Second,
			Args: []string{"/usr/bin/python3", "-c", "import socket,time; s=socket.socket(socket.AF_UNIX); s.bind('\\0skillkit-probe-A'); open('bound','w').close(); time.sleep(3)"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(wsA, "bound")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("call A never bound its socket")
		}
	}
	res := run(t, r, "grep -c skillkit-probe-A /proc/net/unix", Spec{})
	<-done
	if strings.TrimSpace(string(res.Stdout)) != "0" {
		t.Errorf("call B sees call A's socket in /proc/net/unix: %q", res.Stdout)
	}
}

// The helper's parent-death signal is tied to the thread that forked it:
// threads the Go runtime retires while commands start and run (every
// goroutine that exits with its thread locked retires one) must not kill
// them.
func TestConfineSurvivesRetiredThreads(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 200*time.Millisecond)
	ws := testWorkspace(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 1 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				retired := make(chan struct{})
				go func() {
					runtime.LockOSThread()
					close(retired)
				}()
				<-retired
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range 8 {
		res, err := r.Run(t.Context(), Spec{Args: []string{"/bin/sh", "-c", "sleep 0.05; echo alive"}, Workspace: ws, Timeout: 20 * time.Second})
		mustOK(t, res, err)
		if res.ExitCode != 0 || string(res.Stdout) != "alive\n" {
			t.Fatalf("run %d did not survive retired threads: exit %d signal %d stdout %q", i, res.ExitCode, res.Signal, res.Stdout)
		}
	}
}
