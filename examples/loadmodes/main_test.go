package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/examples/internal/capture"
)

// The table the example prints is the rule of the lifetimes: once shows
// a load in the next request only, turn until the agent's next user
// message, session in later turns too.
func TestLoadModes(t *testing.T) {
	out := capture.Main(t, main)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("output is not a title, a header and three rows:\n%s", out)
	}
	want := [][]string{
		{"once", "yes", "no", "no"},
		{"turn", "yes", "yes", "no"},
		{"session", "yes", "yes", "yes"},
	}
	for i, w := range want {
		if got := strings.Fields(lines[2+i]); !slices.Equal(got, w) {
			t.Errorf("row %d = %q, want %q\noutput:\n%s", i+1, got, w, out)
		}
	}
}
