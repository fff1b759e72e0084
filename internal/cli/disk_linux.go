//go:build linux

package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/sandbox"
)

// checkWorkspaceDisk refuses, at start, what would fail every command
// later: the isolated runner without root cannot give a workspace a
// volume of its own, so it refuses workspaces on a filesystem larger than
// its disk bound unless --unbounded-disk accepts that. dir is where the
// workspaces will be; without says how to go without commands.
func checkWorkspaceDisk(r sandbox.Runner, f execFlags, cmd, dir, without string) error {
	return checkWorkspaceDiskAs(os.Geteuid(), sandbox.RunnerName(r), f, cmd, dir, without)
}

// checkWorkspaceDiskAs is checkWorkspaceDisk for a process of effective
// uid euid and a runner of that name.
func checkWorkspaceDiskAs(euid int, runner string, f execFlags, cmd, dir, without string) error {
	if f.unboundedDisk || euid == 0 || runner != "isolated" {
		return nil
	}
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir) // not made yet: its filesystem is its parent's
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil // the call reports it, with the workspace's own path
	}
	size := int64(st.Blocks) * st.Frsize
	if size <= sandbox.DefaultDiskBytes && st.Files > 0 && st.Files <= sandbox.DefaultDiskInodes {
		return nil
	}
	return fmt.Errorf("%s: every workspace_exec command would fail: the workspaces go under %s, on a filesystem of %.1f GiB, and without root the sandbox cannot give each a volume bounded to %s, so a command could fill it; "+
		"pass --unbounded-disk to accept that, run as root, or %s", cmd, dir, float64(size)/(1<<30), mib(sandbox.DefaultDiskBytes), without)
}
