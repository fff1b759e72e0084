//go:build linux

package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/skillkit/skillkit/sandbox"
)

// checkWorkspaceDisk refuses, at start, what would fail every command
// later: the isolated runner without root cannot give a workspace a
// volume of its own, so it refuses workspaces on a filesystem larger than
// its disk bound unless --unbounded-disk accepts that. dir is where the
// workspaces will be; what names what would fail, without how to go
// without commands.
func checkWorkspaceDisk(r sandbox.Runner, f execFlags, cmd, what, dir, without string) error {
	return checkWorkspaceDiskAs(os.Geteuid(), sandbox.RunnerName(r), f, cmd, what, dir, without)
}

// checkWorkspaceDiskAs is checkWorkspaceDisk for a process of effective
// uid euid and a runner of that name.
func checkWorkspaceDiskAs(euid int, runner string, f execFlags, cmd, what, dir, without string) error {
	if f.unboundedDisk || euid == 0 || runner != "isolated" {
		return nil
	}
	var be *sandbox.DiskBoundError
	if err := sandbox.CheckDiskBound(dir, sandbox.Limits{}); !errors.As(err, &be) {
		return nil // within the bound, or a failure the call reports with the workspace's own path
	}
	return fmt.Errorf("%s: %s would fail: the workspaces go under %s, on a filesystem of %.1f GiB, and without root the sandbox cannot give each a volume bounded to %s, so a command could fill it; "+
		"pass --unbounded-disk to accept that, run as root, or %s", cmd, what, dir, float64(be.Bytes)/(1<<30), mib(be.MaxBytes), without)
}
