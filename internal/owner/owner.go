// Package owner names the process that made something (a cgroup, a
// temporary directory) so that a later process can tell a leftover of one
// that died (kill -9) from something still in use: the name carries the
// owner's PID and its start time, which a reused PID does not share.
package owner

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
)

// Self returns "<pid>-<starttime>" for this process.
func Self() (string, error) {
	st, err := startTime(os.Getpid())
	if err != nil {
		return "", err
	}
	return strconv.Itoa(os.Getpid()) + "-" + st, nil
}

// Alive reports whether the process named by an owner string from Self
// still runs. A string it cannot parse counts as alive: not ours to judge.
func Alive(owner string) bool {
	pid, start, ok := strings.Cut(owner, "-")
	if !ok {
		return true
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return true
	}
	st, state, err := stat(n)
	// A zombie (killed, not yet reaped by its parent) is dead: what it
	// owned is a leftover already.
	return err == nil && st == start && state != "Z" && state != "X"
}

// Parse splits "<pid>-<starttime>-<rest>" into the owner and the rest.
func Parse(name string) (owner, rest string, ok bool) {
	pid, after, ok := strings.Cut(name, "-")
	if !ok {
		return "", "", false
	}
	start, rest, ok := strings.Cut(after, "-")
	if !ok || pid == "" || start == "" {
		return "", "", false
	}
	return pid + "-" + start, rest, true
}

// startTime returns field 22 of /proc/PID/stat (start time in clock ticks).
func startTime(pid int) (string, error) {
	st, _, err := stat(pid)
	return st, err
}

// stat returns the start time and the state of a process.
func stat(pid int) (start, state string, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", "", errors.New("owner: malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", "", errors.New("owner: malformed /proc stat")
	}
	return f[19], f[0], nil
}
