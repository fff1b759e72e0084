//go:build linux

package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/sandbox"
)

func TestCheckWorkspaceDisk(t *testing.T) {
	dir := t.TempDir()
	if sandbox.CheckDiskBound(dir, sandbox.Limits{}) == nil {
		t.Skipf("the test's temporary folder %s is on a filesystem within the disk bound; the check has nothing to refuse there", dir)
	}
	notYet := filepath.Join(dir, "not", "made", "yet")
	for _, tc := range []struct {
		name   string
		euid   int
		runner string
		f      execFlags
		dir    string
		want   string // "" for no error
	}{
		{"unprivileged, large filesystem", 1000, "isolated", execFlags{}, dir, "--unbounded-disk"},
		{"a folder not made yet: its parent's filesystem", 1000, "isolated", execFlags{}, notYet, dir},
		{"accepted with --unbounded-disk", 1000, "isolated", execFlags{unboundedDisk: true}, dir, ""},
		{"root makes volumes", 0, "isolated", execFlags{}, dir, ""},
		{"the container runner has its own bound", 1000, "container", execFlags{}, dir, ""},
		{"the local runner bounds nothing", 1000, "local", execFlags{}, dir, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkWorkspaceDiskAs(tc.euid, tc.runner, tc.f, "serve", "every workspace_exec command", tc.dir, "pass --no-exec to serve without commands")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--no-exec")):
				t.Errorf("error %v, want one naming %q and --no-exec", err, tc.want)
			}
		})
	}
}
