package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzCall feeds arbitrary argument bytes to every tool (the argument
// decoder is the parser here) and checks what must always hold: no panic,
// errors say "Error: " and record nothing, effects name a visible skill and
// carry a sorted, duplicate-free selection of its real documents.
func FuzzCall(f *testing.F) {
	for _, s := range []string{
		`{"name":"alpha"}`, `{"skill":"alpha","docs":["notes.txt","notes.txt"]}`,
		`{"skill":"alpha","mode":"add","docs":["references/api.md"]}`, `{"skill":"alpha","include_all_docs":true}`,
		`{"skill":"alpha","path":"../x"}`, `{"skill":"alpha","path":"assets/logo.png"}`, `{"skill":"hidden"}`,
		`{"skill":"alpha","mode":"clear"}`, ``, `null`, `[]`, `{"name":`, `{"skill":"alpha"} x`,
	} {
		f.Add(s)
	}
	fx := newFixture(f)
	all := []Tool{Skill(), Load(), SelectDocs(), ListDocs(), Read()}
	st := state{"alpha": nil}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, tool := range all {
			r := run(t, tool, Call{Args: json.RawMessage(raw), Skills: fx.snap, State: st})
			if r.IsError {
				if !strings.HasPrefix(r.Text, "Error: ") || len(r.Effects) > 0 {
					t.Fatalf("%s(%q): error result %+v", tool.Name, raw, r)
				}
				continue
			}
			for _, e := range r.Effects {
				if _, ok := fx.snap.Lookup(e.Skill); !ok {
					t.Fatalf("%s(%q): effect for unknown skill %q", tool.Name, raw, e.Skill)
				}
				valid, err := fx.snap.Docs(context.Background(), e.Skill)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.IsSorted(e.Docs) || len(slices.Compact(slices.Clone(e.Docs))) != len(e.Docs) {
					t.Fatalf("%s(%q): selection %v not sorted and unique", tool.Name, raw, e.Docs)
				}
				for _, d := range e.Docs {
					if !slices.Contains(valid, d) {
						t.Fatalf("%s(%q): selected %q, not a document", tool.Name, raw, d)
					}
				}
				if e.AllDocs && !slices.Equal(e.Docs, valid) {
					t.Fatalf("%s(%q): all documents selected, but %v listed instead of %v", tool.Name, raw, e.Docs, valid)
				}
			}
		}
	})
}
