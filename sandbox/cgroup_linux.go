//go:build linux

package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/internal/owner"
)

// cgroupPrefix starts the name of every cgroup the runner makes. The rest
// of the name is the owner's PID and start time, so that a later runner can
// tell a leftover of a killed host process (owner gone) from a live one.
const cgroupPrefix = "skillkit-"

// cgroupSet is where the per-call cgroups go: the v1 pids and memory
// hierarchies, or one v2 parent.
type cgroupSet struct {
	pids, memory string // v1 parents; "" when not used
	v2           string // v2 parent; "" on v1
	owner        string // "<pid>-<starttime>" of this process
}

// callCgroups are the cgroups of one call.
type callCgroups struct {
	pids, memory string // v1 directories
	v2           string // v2 directory
	v2fd         int    // open v2 directory for CLONE_INTO_CGROUP, or -1
}

// cgroupV2Unified reports whether the host has only the unified hierarchy.
func cgroupV2Unified() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// newCgroupSet probes the configured hierarchies by making and removing a
// cgroup in each; an error names the hierarchy and the fix.
func newCgroupSet(o IsolatedOptions) (*cgroupSet, error) {
	self, err := owner.Self()
	if err != nil {
		return nil, fmt.Errorf("read own start time: %w", err)
	}
	s := &cgroupSet{owner: self}
	if o.Cgroup2Parent != "" || (o.PidsCgroup == "" && o.MemoryCgroup == "" && cgroupV2Unified()) {
		parent := o.Cgroup2Parent
		if parent == "" {
			parent = DefaultCgroup2Parent
		}
		if err := prepareV2Parent(parent); err != nil {
			return nil, err
		}
		s.v2 = parent
		return s, nil
	}
	s.pids, s.memory = o.PidsCgroup, o.MemoryCgroup
	if s.pids == "" {
		s.pids = DefaultPidsCgroup
	}
	if s.memory == "" {
		s.memory = DefaultMemoryCgroup
	}
	for _, root := range []string{s.pids, s.memory} {
		if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
			return nil, fmt.Errorf("%s is not a cgroup hierarchy: %w", root, err)
		}
		dir := filepath.Join(root, cgroupPrefix+"probe-"+randomSuffix())
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create a cgroup in %s: %w", root, err)
		}
		_ = syscall.Rmdir(dir)
	}
	return s, nil
}

// prepareV2Parent makes parent (a v2 cgroup) hold per-call children with
// the pids and memory controllers enabled.
func prepareV2Parent(parent string) error {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create cgroup %s: %w", parent, err)
	}
	// Enable the controllers on the way down from the nearest ancestor
	// that has them, so that parent's children get them.
	var chain []string
	for d := parent; strings.HasPrefix(d, "/sys/fs/cgroup/"); d = filepath.Dir(d) {
		chain = append([]string{filepath.Dir(d)}, chain...)
	}
	for _, d := range append(chain[1:], parent) {
		_ = os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+pids +memory"), 0)
	}
	b, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", parent, err)
	}
	have := strings.Fields(string(b))
	for _, c := range []string{"pids", "memory"} {
		if !contains(have, c) {
			return fmt.Errorf("cgroup %s cannot enable the %s controller for its children (subtree_control has %q); delegate it or set IsolatedOptions.Cgroup2Parent", parent, c, strings.TrimSpace(string(b)))
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newCall makes the cgroups of one call with their limits set.
func (s *cgroupSet) newCall(l Limits) (*callCgroups, error) {
	name := cgroupPrefix + s.owner + "-" + randomSuffix()
	c := &callCgroups{v2fd: -1}
	fail := func(err error) (*callCgroups, error) {
		_ = c.remove()
		return nil, err
	}
	if s.v2 != "" {
		c.v2 = filepath.Join(s.v2, name)
		if err := os.Mkdir(c.v2, 0o755); err != nil {
			c.v2 = ""
			return fail(fmt.Errorf("create cgroup: %w", err))
		}
		// The helper and its few runtime threads live in the cgroup
		// with the command.
		if err := writeCgroup(c.v2, "pids.max", l.Processes+helperTaskSlack); err != nil {
			return fail(err)
		}
		if err := writeCgroup(c.v2, "memory.max", l.Memory); err != nil {
			return fail(err)
		}
		_ = writeCgroup(c.v2, "memory.swap.max", 0)
		fd, err := unix.Open(c.v2, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail(fmt.Errorf("open cgroup %s: %w", c.v2, err))
		}
		c.v2fd = fd
		return c, nil
	}
	c.pids = filepath.Join(s.pids, name)
	if err := os.Mkdir(c.pids, 0o755); err != nil {
		c.pids = ""
		return fail(fmt.Errorf("create pids cgroup: %w", err))
	}
	// +1: the helper's thread that forks the command lives there too.
	if err := writeCgroup(c.pids, "pids.max", l.Processes+1); err != nil {
		return fail(err)
	}
	c.memory = filepath.Join(s.memory, name)
	if err := os.Mkdir(c.memory, 0o755); err != nil {
		c.memory = ""
		return fail(fmt.Errorf("create memory cgroup: %w", err))
	}
	if err := writeCgroup(c.memory, "memory.limit_in_bytes", l.Memory); err != nil {
		return fail(err)
	}
	// With swap accounting, swap counts too (the file exists only then).
	if _, err := os.Stat(filepath.Join(c.memory, "memory.memsw.limit_in_bytes")); err == nil {
		if err := writeCgroup(c.memory, "memory.memsw.limit_in_bytes", l.Memory); err != nil {
			return fail(err)
		}
	}
	return c, nil
}

// join places the helper (pid) in the call's v1 cgroups: its main thread,
// which forks the command, in the pids cgroup (so the helper's runtime
// threads do not count against Limits.Processes), the whole process in
// the memory cgroup. On v2 the helper was born in the cgroup.
func (c *callCgroups) join(pid int) error {
	if c.pids != "" {
		if err := os.WriteFile(filepath.Join(c.pids, "tasks"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("join pids cgroup %s: %w", c.pids, err)
		}
	}
	if c.memory != "" {
		if err := os.WriteFile(filepath.Join(c.memory, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("join memory cgroup %s: %w", c.memory, err)
		}
	}
	return nil
}

// oomKilled reports whether the kernel killed a process of the call for
// exceeding the memory bound.
func (c *callCgroups) oomKilled() bool {
	var file, key string
	switch {
	case c.v2 != "":
		file, key = filepath.Join(c.v2, "memory.events"), "oom_kill"
	case c.memory != "":
		file, key = filepath.Join(c.memory, "memory.oom_control"), "oom_kill"
	default:
		return false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == key {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n > 0
		}
	}
	return false
}

// remove kills whatever is left in the call's cgroups and removes them.
func (c *callCgroups) remove() error {
	if c.v2fd >= 0 {
		_ = unix.Close(c.v2fd)
		c.v2fd = -1
	}
	var errs []error
	for _, dir := range []string{c.pids, c.memory, c.v2} {
		if dir != "" {
			if err := removeCgroup(dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeCgroup kills the tasks left in dir and removes it, waiting briefly
// for exiting tasks to leave.
func removeCgroup(dir string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", dir, err)
		}
		killCgroup(dir)
		time.Sleep(time.Millisecond)
	}
}

// killCgroup sends SIGKILL to every task listed in dir.
func killCgroup(dir string) {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err == nil {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sweep removes the cgroups a killed runner process left behind: those
// named by this package whose owner process is gone. Others' are left
// alone.
func (s *cgroupSet) sweep() {
	for _, root := range []string{s.pids, s.memory, s.v2} {
		if root == "" {
			continue
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
			if !ok || !e.IsDir() {
				continue
			}
			// rest is <pid>-<starttime>-<random>.
			who, _, ok := owner.Parse(rest)
			if !ok || owner.Alive(who) {
				continue
			}
			_ = removeCgroup(filepath.Join(root, e.Name()))
		}
	}
}

// writeCgroup writes an integer to a cgroup control file.
func writeCgroup(dir, file string, v int64) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
		return fmt.Errorf("set %s/%s: %w", dir, file, err)
	}
	return nil
}
