//go:build linux

package sandbox

import (
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockConfig handles every filesystem right of ABI 6, TCP bind and
// connect unless the command may use the network, and scopes signals and
// abstract UNIX sockets to the command's own domain.
func landlockConfig(network bool) landlock.Config {
	c := landlock.Config{
		HandledAccessFS: landlock.V6.HandledAccessFS,
		Scoped:          landlock.V6.Scoped,
	}
	if !network {
		c.HandledAccessNet = landlock.V6.HandledAccessNet
	}
	return c
}

// landlockRules grants read (and execute) on the system directories and
// /etc, read-write on the workspace and the private scratch directories,
// and read on the Spec.ReadOnly paths, all paths of the private root.
func landlockRules(readOnly []string) []landlock.Rule {
	rules := []landlock.Rule{
		// Listing any directory of the private root is harmless: it
		// holds only what the command may see.
		landlock.PathAccess(landlock.AccessFSSet(llsys.AccessFSReadDir), "/"),
		landlock.RODirs(llRODirs...).IgnoreIfMissing(),
		landlock.ROFiles(llROFiles...).IgnoreIfMissing(),
		landlock.RWFiles(llRWFiles...).IgnoreIfMissing(),
		landlock.RWDirs(llRWDirs...).WithRefer().IgnoreIfMissing(),
	}
	for _, p := range readOnly {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			rules = append(rules, landlock.RODirs(p))
		} else {
			rules = append(rules, landlock.ROFiles(p).IgnoreIfMissing())
		}
	}
	return rules
}
