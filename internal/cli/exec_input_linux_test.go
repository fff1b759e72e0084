package cli

import (
	"context"
	"testing"
)

// TestExecStdinTerminal gives skillkit a real terminal as stdin, with a
// line and an end of file typed: skillkit leaves it alone and the
// command's stdin is empty.
func TestExecStdinTerminal(t *testing.T) {
	needIsolation(t)
	master, slave := openPTY(t)
	if _, err := master.Write([]byte("typed\n\x04")); err != nil { // ^D: end of file in canonical mode
		t.Fatal(err)
	}
	out, errOut, code := runIO(context.Background(), t.TempDir(), slave, "exec", "--", "cat")
	if code != 0 || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and an empty stdout", code, out, errOut)
	}
}
