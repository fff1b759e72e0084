// Package proctest finds host processes by their command line, for
// skillkit's own tests of what a command leaves running. It reads /proc
// (Linux).
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Alive reports whether pid is a process that has not ended: a zombie,
// ended but not yet reaped, is not alive.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// WithArg lists the live host processes whose command line contains arg
// (a test gives its grandchildren a unique argument to find them by).
func WithArg(arg string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(arg)) && Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
