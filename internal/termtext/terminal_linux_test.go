package termtext

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestIsTerminal checks detection on a real pseudo-terminal, a pipe and a
// regular file.
func TestIsTerminal(t *testing.T) {
	master, slave := openPTY(t)
	if !IsTerminal(slave.Fd()) || !IsTerminal(master.Fd()) {
		t.Error("a pseudo-terminal is not a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, fd := range map[string]uintptr{"pipe": w.Fd(), "file": f.Fd(), "closed": ^uintptr(0)} {
		if IsTerminal(fd) {
			t.Errorf("%s is a terminal", name)
		}
	}
}

// openPTY opens a pseudo-terminal pair; the test is skipped without
// /dev/ptmx.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("needs pseudo-terminals (/dev/ptmx): %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("needs pseudo-terminals (unlockpt): %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("needs pseudo-terminals (TIOCGPTN): %v", err)
	}
	s, err := os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("needs pseudo-terminals (/dev/pts): %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}
