package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/skillkit/skillkit/session"
)

// TestExtendSharesNoSlots extends one snapshot twice, as a writer and a
// reader catching up may: neither extension may change the other, nor
// the snapshot they grew from.
func TestExtendSharesNoSlots(t *testing.T) {
	base := &snapshot{events: make([]session.Event, 1, 8), state: map[string]string{"k": "0"}}
	base.events[0] = session.Event{Seq: 1, Text: "base"}
	base.lastSeq = 1
	a := base.extend(session.Event{Seq: 2, Text: "a"}, map[string]*string{"k": session.Ptr("a")})
	b := base.extend(session.Event{Seq: 2, Text: "b"}, map[string]*string{"k": session.Ptr("b")})
	a2 := a.extend(session.Event{Seq: 3, Text: "a2"}, nil)
	for _, c := range []struct {
		name  string
		p     *snapshot
		texts []string
		k     string
	}{
		{"base", base, []string{"base"}, "0"},
		{"first extension", a, []string{"base", "a"}, "a"},
		{"second extension", b, []string{"base", "b"}, "b"},
		{"extension of the first", a2, []string{"base", "a", "a2"}, "a"},
	} {
		var texts []string
		for _, e := range c.p.events {
			texts = append(texts, e.Text)
		}
		if len(texts) != len(c.texts) || c.p.state["k"] != c.k {
			t.Fatalf("%s: events %q, state %v; want %q, k=%s", c.name, texts, c.p.state, c.texts, c.k)
		}
		for i := range texts {
			if texts[i] != c.texts[i] {
				t.Fatalf("%s: events %q, want %q", c.name, texts, c.texts)
			}
		}
	}
}

// TestCatchUpRefuses gives catchUp copies the file cannot extend: it must
// send the caller to a full read rather than fold new rows into them.
func TestCatchUpRefuses(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Create(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := st.Append(ctx, "s", session.Event{Kind: session.KindUser}); err != nil {
			t.Fatal(err)
		}
	}
	file, err := st.snapshot(ctx, nil, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		base *snapshot
	}{
		{"another incarnation", &snapshot{created: file.created + 1, lastSeq: 1, events: file.events[:1], state: map[string]string{}}},
		{"ahead of the file", &snapshot{created: file.created, lastSeq: 5, events: file.events, state: map[string]string{}}},
	}
	for _, tt := range tests {
		if p, ok, err := catchUp(ctx, st.rs.head, "s", tt.base); ok || p != nil || err != nil {
			t.Errorf("%s: catchUp = %v, %v, %v; want a refusal", tt.name, p != nil, ok, err)
		}
	}
	if p, ok, err := catchUp(ctx, st.rs.head, "s", &snapshot{created: file.created, lastSeq: 1, events: file.events[:1:1], state: map[string]string{}}); !ok || err != nil || p.lastSeq != 2 || len(p.events) != 2 {
		t.Errorf("catchUp of a copy one event behind = %+v, %v, %v", p, ok, err)
	}
}

// TestCachePutKeepsNewer puts an older copy of a session over a newer
// one, as racing readers may: the newer stays, unless the older belongs
// to another incarnation.
func TestCachePutKeepsNewer(t *testing.T) {
	c := newCache(2)
	c.put("s", &snapshot{created: 1, lastSeq: 5})
	c.put("s", &snapshot{created: 1, lastSeq: 3})
	if got := c.get("s"); got.lastSeq != 5 {
		t.Fatalf("after an older put the entry is at %d, want 5", got.lastSeq)
	}
	c.put("s", &snapshot{created: 2, lastSeq: 1})
	if got := c.get("s"); got.created != 2 {
		t.Fatalf("another incarnation's copy did not replace the entry: %+v", got)
	}
}
