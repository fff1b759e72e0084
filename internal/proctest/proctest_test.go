package proctest

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestWithArg(t *testing.T) {
	marker := "12.34" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("sleep", marker)
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep to run: %v", err)
	}
	// The child takes the marker as its argument once it has executed
	// sleep: wait for it.
	for i := 0; i < 2000 && !slices.Contains(WithArg(marker), cmd.Process.Pid); i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if got := WithArg(marker); !slices.Equal(got, []int{cmd.Process.Pid}) || !Alive(cmd.Process.Pid) {
		t.Errorf("WithArg = %v, want [%d]", got, cmd.Process.Pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if got := WithArg(marker); len(got) != 0 || Alive(cmd.Process.Pid) {
		t.Errorf("after the end: WithArg = %v, Alive %v", got, Alive(cmd.Process.Pid))
	}
}
