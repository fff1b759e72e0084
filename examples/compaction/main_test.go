package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/examples/internal/capture"
)

// Turn 2's request after the load is over the budget, so the history is
// summarised just before it: from then on the requests open with the
// summary, no longer hold turn 1's answer, and still hold the skill
// loaded before the compaction.
func TestCompaction(t *testing.T) {
	out := capture.Main(t, main)
	var got []string
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "turn "):
			got = append(got, line[:len("turn 1")])
		case strings.HasPrefix(line, "request "):
			// The step, then yes or no for: the summary first, turn 1's
			// answer, the skill.
			var step int
			var summary, answer, skill string
			if _, err := fmt.Sscanf(line, "request %d: opens with the summary: %s turn 1's answer: %s "+skillName+": %s", &step, &summary, &answer, &skill); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got = append(got, fmt.Sprintf("request %d %s %s %s", step, strings.TrimSuffix(summary, ","), strings.TrimSuffix(answer, ","), skill))
		case strings.HasPrefix(line, "compaction: "):
			var before, after int
			if _, err := fmt.Sscanf(line, "compaction: %d → %d tokens", &before, &after); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if before <= maxTokens || after > maxTokens {
				t.Errorf("compaction from %d to %d tokens, want from over the budget of %d to within it", before, after, maxTokens)
			}
			got = append(got, "compaction")
		case strings.HasPrefix(line, "summary: "):
			if want := summaryScript.Steps[0].Text; line != "summary: "+want {
				t.Errorf("%q, want the summarising model's answer %q", line, want)
			}
		}
	}
	want := []string{
		"turn 1",
		"request 1 no no no",
		"turn 2",
		"request 1 no yes no",
		"compaction",
		"request 2 yes no yes",
		"request 3 yes no yes",
	}
	if !slices.Equal(got, want) {
		t.Errorf("turns, requests (summary first, turn 1's answer, skill) and compactions:\n%q\nwant:\n%q\noutput:\n%s", got, want, out)
	}
}
