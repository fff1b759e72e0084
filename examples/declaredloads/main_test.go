package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/examples/internal/capture"
)

// The declared skill and document reach the first request (the script's
// expectation fails the run otherwise) with no skill_load call, and each
// bad declaration ends its run with its error before any event, model
// request or stored change.
func TestDeclaredLoads(t *testing.T) {
	out := capture.Main(t, main)
	good, bad, ok := strings.Cut(out, "Bad declarations, in the same session:\n")
	if !ok {
		t.Fatalf("no bad declarations in the output:\n%s", out)
	}
	want := "  user: How should my API report errors?\n" +
		"  declared: api-style-guide, instructions true, docs [references/errors.md], lifetime turn\n" +
		"  model request 1: 0 tool call(s)\n" +
		"  answer: Use application/problem+json"
	if !strings.Contains(good, want) {
		t.Errorf("the declared load's output lacks\n%s\noutput:\n%s", want, good)
	}
	if strings.Contains(good, "tool_result") || strings.Contains(good, "model request 2") {
		t.Errorf("the model did more than answer:\n%s", good)
	}

	runs := regexp.MustCompile(`(?m)^  (an unknown skill|a missing document): (.*)\n    (.*)\n    events yielded (\d+), model requests (\d+) → (\d+), session events (\d+) → (\d+)\n`).FindAllStringSubmatch(bad, -1)
	if len(runs) != 2 {
		t.Fatalf("want two bad runs, got %d:\n%s", len(runs), bad)
	}
	for i, want := range []struct{ err, flags string }{
		{`skill unavailable: declaration 1 (skill "api-style-gide") is unknown`, "ErrSkillUnavailable true, ErrInvalidLoadRequest false"},
		{`document "references/retries.md" does not exist`, "ErrSkillUnavailable false, ErrInvalidLoadRequest true"},
	} {
		r := runs[i]
		if !strings.Contains(r[2], want.err) {
			t.Errorf("%s: error %q, want it to say %q", r[1], r[2], want.err)
		}
		if r[3] != want.flags {
			t.Errorf("%s: %s, want %s", r[1], r[3], want.flags)
		}
		if r[4] != "0" || r[5] != "1" || r[6] != "1" || r[7] != r[8] {
			t.Errorf("%s: events yielded %s, model requests %s → %s, session events %s → %s; want nothing yielded, asked or stored",
				r[1], r[4], r[5], r[6], r[7], r[8])
		}
	}
}
