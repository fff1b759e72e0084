package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTerminalPTY runs commands with stdout on a real pseudo-terminal
// and Env.IsTerminal unset: the escapes in a skill path and in a
// command's output reach the terminal escaped, while stderr (a buffer,
// not a terminal) keeps the exact bytes.
func TestTerminalPTY(t *testing.T) {
	root := hostileSkill(t)
	for _, tc := range []struct {
		args            []string
		stdout, errText string
	}{
		{[]string{"list", root}, `root\x1b]0;pwned\x07/evil`, ""},
		{[]string{"exec", "--local", "--", "sh", "-c", `printf 'a\033[2Jb\342\200\256c'; printf 'e\033[1m' >&2`}, `a\x1b[2Jb\u202ec`, "e\x1b[1m"},
	} {
		master, slave := openPTY(t)
		got := make(chan string)
		go func() {
			b, _ := io.ReadAll(master) // ends with EIO once the slave is closed
			got <- string(b)
		}()
		var errb bytes.Buffer
		code := Run(context.Background(), tc.args, Env{Stdout: slave, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: t.TempDir()})
		slave.Close()
		out := <-got
		if code != 0 {
			t.Fatalf("%v: exit %d; stderr %q", tc.args, code, errb.String())
		}
		if !strings.Contains(out, tc.stdout) || strings.ContainsAny(out, "\x1b\x07\u202e") {
			t.Errorf("%v: terminal got %q, want %q and no raw controls", tc.args, out, tc.stdout)
		}
		if !strings.Contains(errb.String(), tc.errText) {
			t.Errorf("%v: stderr %q, want the exact bytes %q", tc.args, errb.String(), tc.errText)
		}
	}
}

// openPTY opens a pseudo-terminal pair with output post-processing off,
// so the master reads exactly what was written; the test is skipped
// without /dev/ptmx.
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
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("needs pseudo-terminals (/dev/pts): %v", err)
	}
	t.Cleanup(func() { s.Close() })
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return m, s
}
