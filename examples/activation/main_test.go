package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/examples/internal/capture"
)

// The notes tools are offered only from the request after the skill's
// load, without write_file (the set is read-only), and notes_read_file
// returns the draft.
func TestActivation(t *testing.T) {
	out := capture.Main(t, main)
	var requests [][]string
	for line := range strings.Lines(out) {
		if _, names, ok := strings.Cut(line, " tools: "); ok && strings.HasPrefix(line, "request ") {
			requests = append(requests, strings.Fields(names))
		}
	}
	if len(requests) != 3 {
		t.Fatalf("want 3 requests, got %d:\n%s", len(requests), out)
	}
	notes := []string{"notes_read_file", "notes_list_files", "notes_glob", "notes_grep"}
	for i, names := range requests {
		var got []string
		for _, n := range names {
			if strings.HasPrefix(n, "notes_") {
				got = append(got, n)
			}
		}
		want := notes
		if i == 0 {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("request %d offers the notes tools %q, want %q", i+1, got, want)
		}
		if !slices.Contains(names, "skill_load") {
			t.Errorf("request %d does not offer skill_load: %q", i+1, names)
		}
	}
	for _, want := range []string{
		"  skill_load {\"skill\":\"api-style-guide\",\"docs\":[\"references/errors.md\"]} →\n    | loaded: api-style-guide\n",
		"  notes_read_file {\"path\":\"draft.md\"} →\n    | POST /invoices/{id}/send\n    | When the invoice is locked: 200 {\"ok\": false, \"error\": \"locked\"}\n",
		"answer: A locked invoice should be 409",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks\n%s\noutput:\n%s", want, out)
		}
	}
}
