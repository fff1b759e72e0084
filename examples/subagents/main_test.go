package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/examples/internal/capture"
)

// The skill the researcher loads is in its own second request and in none
// of the coordinator's, whether it is called as a tool or handed the
// turn; a hand-off yields the coordinator's events, the transfer, then
// the researcher's turn with its answer.
func TestSubAgents(t *testing.T) {
	out := capture.Main(t, main)
	tool, handOff, ok := strings.Cut(out, "2. The coordinator hands the turn to the researcher\n")
	if !ok {
		t.Fatalf("no hand-off part:\n%s", out)
	}
	for _, want := range []string{
		"answer: Our API style guide says: " + findings + "\n",
		"  coordinator: request 1 no, request 2 no\n",
		"  researcher:  request 1 no, request 2 yes\n",
	} {
		if !strings.Contains(tool, want) {
			t.Errorf("the tool part lacks %q:\n%s", want, out)
		}
	}

	var got []string
	for line := range strings.Lines(handOff) {
		f := strings.Fields(line)
		got = append(got, f[0]+" "+f[1]+" "+f[len(f)-1])
	}
	want := []string{
		"coordinator user like?",
		"coordinator response no",
		"coordinator tool_result researcher",
		"coordinator transfer researcher",
		"researcher user like?",
		"researcher response no",
		"researcher tool_result api-style-guide",
		"researcher response yes",
		"researcher answer (references/errors.md).",
	}
	if !slices.Equal(got, want) {
		t.Errorf("hand-off events (agent, kind, last word):\n%q\nwant:\n%q\noutput:\n%s", got, want, out)
	}
}
