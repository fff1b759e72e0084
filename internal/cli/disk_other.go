//go:build !linux

package cli

import "github.com/skillkit/skillkit/sandbox"

// checkWorkspaceDisk has nothing to check off Linux, where the isolated
// runner, whose disk bound it is about, does not exist.
func checkWorkspaceDisk(sandbox.Runner, execFlags, string, string, string, string) error {
	return nil
}
