package owner

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSelfAlive(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if !Alive(self) {
		t.Errorf("Alive(%q) = false for this process", self)
	}
	pid, start, _ := strings.Cut(self, "-")
	if Alive(pid + "-" + start + "0") {
		t.Error("a different start time (a reused PID) counts as alive")
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(strconv.Itoa(cmd.Process.Pid) + "-1") {
		t.Error("an exited process counts as alive")
	}
	// Killed and not reaped yet: a zombie is dead too.
	zombie := exec.Command("/bin/sleep", "60")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	zst, err := startTime(zombie.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	owner := strconv.Itoa(zombie.Process.Pid) + "-" + zst
	if !Alive(owner) {
		t.Error("a running child counts as dead")
	}
	_ = zombie.Process.Kill()
	for {
		if _, state, err := stat(zombie.Process.Pid); err != nil || state == "Z" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if Alive(owner) {
		t.Error("a zombie counts as alive")
	}
	_ = zombie.Wait()
	for _, odd := range []string{"", "x", "12", "a-b"} {
		if !Alive(odd) {
			t.Errorf("Alive(%q) = false; an unparsable owner must count as alive", odd)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, owner, rest string }{
		{"12-345-abc", "12-345", "abc"},
		{"12-345-a-b", "12-345", "a-b"},
	} {
		o, r, ok := Parse(tc.in)
		if !ok || o != tc.owner || r != tc.rest {
			t.Errorf("Parse(%q) = %q %q %v", tc.in, o, r, ok)
		}
	}
	for _, bad := range []string{"", "12", "12-345", "-1-x", "1--x"} {
		if _, _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) ok", bad)
		}
	}
}

func Example() {
	self, _ := Self()
	_ = Alive(self) // true while this process runs
}
