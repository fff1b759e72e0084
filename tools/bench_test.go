package tools

import (
	"encoding/json"
	"testing"
)

// BenchmarkSkillCached is one skill tool call on a skill whose body is
// already cached: argument decoding, the checks, rendering. Target:
// 20 µs or less.
func BenchmarkSkillCached(b *testing.B) {
	f := newFixture(b)
	tool := Skill()
	c := Call{Args: json.RawMessage(`{"name":"alpha"}`), Skills: f.snap}
	if r := run(b, tool, c); r.IsError {
		b.Fatal(r.Text)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := run(b, tool, c); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

// BenchmarkLoadWithDocs is a skill_load call selecting two documents of a
// skill whose body and manifest are cached.
func BenchmarkLoadWithDocs(b *testing.B) {
	f := newFixture(b)
	tool := Load()
	c := Call{Args: json.RawMessage(`{"skill":"alpha","docs":["references/guide.md","notes.txt"]}`), Skills: f.snap}
	if r := run(b, tool, c); r.IsError {
		b.Fatal(r.Text)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := run(b, tool, c); r.IsError {
			b.Fatal(r.Text)
		}
	}
}
