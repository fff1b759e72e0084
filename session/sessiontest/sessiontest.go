// Package sessiontest is the conformance suite for session.Store
// implementations. Every store runs the same tests:
//
//	func TestConformance(t *testing.T) {
//		sessiontest.Run(t, func(t *testing.T, opts *session.Options) session.Store {
//			return mystore.New(opts)
//		})
//	}
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/session"
)

// NewStore returns a fresh, empty store configured with opts (nil means
// defaults). The suite closes it; NewStore may also register t.Cleanup.
type NewStore func(t *testing.T, opts *session.Options) session.Store

// Run runs the conformance suite against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, NewStore)
	}{
		{"Create", testCreate},
		{"GetMissing", testGetMissing},
		{"AppendSeqTurnAndDelta", testAppend},
		{"AppendInvalid", testAppendInvalid},
		{"StateMatchesGet", testState},
		{"AppendFuncAtomic", testAppendFunc},
		{"AppendFuncNoLostUpdates", testAppendFuncConcurrent},
		{"SnapshotsAreCopies", testSnapshotsAreCopies},
		{"ListAndDelete", testListAndDelete},
		{"HookRewritesDelta", testHookRewrites},
		{"HookVeto", testHookVeto},
		{"HookChainOrder", testHookChain},
		{"Concurrent", testConcurrent},
		{"ContextAndClose", testContextAndClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore) })
	}
}

func open(t *testing.T, newStore NewStore, opts *session.Options) session.Store {
	t.Helper()
	s := newStore(t, opts)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mustCreate(t *testing.T, s session.Store, id string) *session.Session {
	t.Helper()
	sess, err := s.Create(context.Background(), id, nil)
	if err != nil {
		t.Fatalf("Create(%q): %v", id, err)
	}
	return sess
}

func mustAppend(t *testing.T, s session.Store, id string, ev session.Event) session.Event {
	t.Helper()
	got, err := s.Append(context.Background(), id, ev)
	if err != nil {
		t.Fatalf("Append(%q, %+v): %v", id, ev, err)
	}
	return got
}

func mustGet(t *testing.T, s session.Store, id string) *session.Session {
	t.Helper()
	sess, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%q): %v", id, err)
	}
	return sess
}

func testCreate(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := open(t, newStore, nil)
	tests := []struct {
		name    string
		id      string
		meta    map[string]string
		wantErr error
	}{
		{"given ID and meta", "s1", map[string]string{"mode": "turn", "roots": "/a:/b"}, nil},
		{"generated ID", "", nil, nil},
		{"ID at limit", strings.Repeat("x", session.MaxIDLength), nil, nil},
		{"ID over limit", strings.Repeat("y", session.MaxIDLength+1), nil, session.ErrInvalidArgument},
		{"control character", "a\nb", nil, session.ErrInvalidArgument},
		{"empty meta key", "s2", map[string]string{"": "x"}, session.ErrInvalidArgument},
		{"duplicate", "s1", nil, session.ErrExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().Add(-time.Second)
			got, err := s.Create(ctx, tt.id, tt.meta)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Create(%q) error = %v, want %v", tt.id, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create(%q): %v", tt.id, err)
			}
			if tt.id != "" && got.ID != tt.id {
				t.Errorf("ID = %q, want %q", got.ID, tt.id)
			}
			if got.ID == "" {
				t.Error("ID is empty")
			}
			if got.Created.Before(before) || got.Created.Location() != time.UTC {
				t.Errorf("Created = %v, want a recent UTC time", got.Created)
			}
			want := tt.meta
			if want == nil {
				want = map[string]string{}
			}
			if diff := cmp.Diff(want, got.Meta); diff != "" {
				t.Errorf("Meta (-want +got):\n%s", diff)
			}
			if got.State == nil || len(got.State) != 0 || len(got.Events) != 0 {
				t.Errorf("new session has state %v, events %v; want empty non-nil state, no events", got.State, got.Events)
			}
			again := mustGet(t, s, got.ID)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("Get after Create (-create +get):\n%s", diff)
			}
		})
	}
}

func testGetMissing(t *testing.T, newStore NewStore) {
	s := open(t, newStore, nil)
	_, err := s.Get(context.Background(), "nope-42")
	if !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "nope-42") {
		t.Fatalf("Get(missing) error = %v, want ErrNotFound naming the ID", err)
	}
	_, err = s.Append(context.Background(), "nope-43", session.Event{Kind: session.KindUser})
	if !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "nope-43") {
		t.Fatalf("Append(missing) error = %v, want ErrNotFound naming the ID", err)
	}
}

func testAppend(t *testing.T, newStore NewStore) {
	s := open(t, newStore, nil)
	id := mustCreate(t, s, "").ID
	fixed := time.Date(2025, 3, 4, 5, 6, 7, 8, time.FixedZone("X", 3600))
	steps := []struct {
		name      string
		ev        session.Event
		wantTurn  int
		wantState map[string]string
	}{
		{"state before first user message", session.Event{Kind: session.KindState, StateDelta: map[string]*string{"mode": session.Ptr("turn")}},
			0, map[string]string{"mode": "turn"}},
		{"user message starts turn 1", session.Event{Kind: session.KindUser, Agent: "main", Text: "hi", ID: "ev-user", Time: fixed},
			1, map[string]string{"mode": "turn"}},
		{"assistant with text and two tool calls", session.Event{Kind: session.KindAssistant, Agent: "main", Text: "Loading both.", ToolCalls: []session.ToolCall{
			{ID: "c1", Name: "load", Arguments: `{"skill":"pdf"}`}, {ID: "c2", Name: "load", Arguments: `{"skill": "docx", oops`}}},
			1, map[string]string{"mode": "turn"}},
		{"tool result sets keys and records loads", session.Event{Kind: session.KindTool, Agent: "main", ToolCallID: "c1", ToolName: "load", Text: "loaded: pdf",
			StateDelta: map[string]*string{"loaded/main/pdf": session.Ptr("1"), "docs/main/pdf": session.Ptr("*")},
			Loads:      []session.Load{{Skill: "pdf", Instructions: true, Docs: []string{"a.md", "b.md"}, Lifetime: "turn"}, {Skill: "inline", Inline: true}}},
			1, map[string]string{"mode": "turn", "loaded/main/pdf": "1", "docs/main/pdf": "*"}},
		{"failed tool result", session.Event{Kind: session.KindTool, ToolCallID: "c2", IsError: true, Text: "boom"},
			1, map[string]string{"mode": "turn", "loaded/main/pdf": "1", "docs/main/pdf": "*"}},
		{"second user message deletes and overwrites", session.Event{Kind: session.KindUser, Text: "again", StateDelta: map[string]*string{
			"loaded/main/pdf": nil, "docs/main/pdf": nil, "never-set": nil, "mode": session.Ptr("session"), "empty": session.Ptr("")}},
			2, map[string]string{"mode": "session", "empty": ""}},
		{"summary of earlier events", session.Event{Kind: session.KindSummary, Agent: "main", Text: "The user asked for a PDF.", Summarizes: 3},
			2, map[string]string{"mode": "session", "empty": ""}},
	}
	var want []session.Event
	for i, st := range steps {
		got := mustAppend(t, s, id, st.ev)
		if got.Seq != int64(i+1) {
			t.Errorf("%s: Seq = %d, want %d", st.name, got.Seq, i+1)
		}
		if got.Turn != st.wantTurn {
			t.Errorf("%s: Turn = %d, want %d", st.name, got.Turn, st.wantTurn)
		}
		if got.ID == "" || got.Time.IsZero() || got.Time.Location() != time.UTC {
			t.Errorf("%s: ID %q Time %v; want both assigned, Time in UTC", st.name, got.ID, got.Time)
		}
		if st.ev.ID != "" && got.ID != st.ev.ID {
			t.Errorf("%s: ID = %q, want caller's %q", st.name, got.ID, st.ev.ID)
		}
		if !st.ev.Time.IsZero() && !got.Time.Equal(st.ev.Time) {
			t.Errorf("%s: Time = %v, want caller's %v", st.name, got.Time, st.ev.Time)
		}
		wantEv := st.ev.Clone()
		wantEv.Seq, wantEv.Turn, wantEv.ID, wantEv.Time = got.Seq, got.Turn, got.ID, got.Time
		if diff := cmp.Diff(wantEv, got); diff != "" {
			t.Errorf("%s: stored event (-want +got):\n%s", st.name, diff)
		}
		want = append(want, got)
		snap := mustGet(t, s, id)
		if diff := cmp.Diff(st.wantState, snap.State); diff != "" {
			t.Errorf("%s: state (-want +got):\n%s", st.name, diff)
		}
	}
	snap := mustGet(t, s, id)
	if diff := cmp.Diff(want, snap.Events); diff != "" {
		t.Errorf("events in snapshot (-appended +got):\n%s", diff)
	}
	if snap.LastSeq() != int64(len(steps)) || snap.Turn() != 2 {
		t.Errorf("LastSeq, Turn = %d, %d; want %d, 2", snap.LastSeq(), snap.Turn(), len(steps))
	}
}

func testAppendInvalid(t *testing.T, newStore NewStore) {
	s := open(t, newStore, nil)
	id := mustCreate(t, s, "").ID
	tests := []struct {
		name  string
		ev    session.Event
		field string
	}{
		{"unknown kind", session.Event{Kind: "robot"}, "Kind"},
		{"empty kind", session.Event{}, "Kind"},
		{"tool calls on user", session.Event{Kind: session.KindUser, ToolCalls: []session.ToolCall{{ID: "a", Name: "b"}}}, "ToolCalls"},
		{"tool call without ID", session.Event{Kind: session.KindAssistant, ToolCalls: []session.ToolCall{{Name: "b"}}}, "ToolCalls[0].ID"},
		{"duplicate tool call ID", session.Event{Kind: session.KindAssistant, ToolCalls: []session.ToolCall{{ID: "a", Name: "b"}, {ID: "a", Name: "c"}}}, "ToolCalls[1].ID"},
		{"tool call without name", session.Event{Kind: session.KindAssistant, ToolCalls: []session.ToolCall{{ID: "a"}}}, "ToolCalls[0].Name"},
		{"load without a name", session.Event{Kind: session.KindTool, ToolCallID: "a", Loads: []session.Load{{Docs: []string{"x"}}}}, "Loads[0].Skill"},
		{"tool result without call ID", session.Event{Kind: session.KindTool, Text: "x"}, "ToolCallID"},
		{"tool fields on assistant", session.Event{Kind: session.KindAssistant, IsError: true}, "IsError"},
		{"empty delta key", session.Event{Kind: session.KindState, StateDelta: map[string]*string{"": session.Ptr("x")}}, "StateDelta"},
		{"summary that summarizes nothing", session.Event{Kind: session.KindSummary, Text: "x"}, "Summarizes"},
		{"summarizes on a user event", session.Event{Kind: session.KindUser, Summarizes: 2}, "Summarizes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Append(context.Background(), id, tt.ev)
			if !errors.Is(err, session.ErrInvalidEvent) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("Append error = %v, want ErrInvalidEvent naming %s", err, tt.field)
			}
		})
	}
	if n := len(mustGet(t, s, id).Events); n != 0 {
		t.Fatalf("%d events appended by invalid appends, want 0", n)
	}
}

func testSnapshotsAreCopies(t *testing.T, newStore NewStore) {
	s := open(t, newStore, nil)
	meta := map[string]string{"k": "v"}
	created, err := s.Create(context.Background(), "copy", meta)
	if err != nil {
		t.Fatal(err)
	}
	meta["k"] = "changed"
	created.Meta["k"] = "changed too"
	ev := session.Event{Kind: session.KindAssistant, ToolCalls: []session.ToolCall{{ID: "c", Name: "t"}}, StateDelta: map[string]*string{"a": session.Ptr("1")}}
	got := mustAppend(t, s, "copy", ev)
	*ev.StateDelta["a"] = "caller changed"
	ev.ToolCalls[0].Name = "caller changed"
	*got.StateDelta["a"] = "result changed"
	got.ToolCalls[0].Name = "result changed"
	snap := mustGet(t, s, "copy")
	snap.State["a"] = "snapshot changed"
	*snap.Events[0].StateDelta["a"] = "snapshot changed"
	snap.Events[0].ToolCalls[0].Name = "snapshot changed"

	again := mustGet(t, s, "copy")
	if again.Meta["k"] != "v" || again.State["a"] != "1" || *again.Events[0].StateDelta["a"] != "1" || again.Events[0].ToolCalls[0].Name != "t" {
		t.Fatalf("store shares memory with callers: meta %v state %v delta %q call %q",
			again.Meta, again.State, *again.Events[0].StateDelta["a"], again.Events[0].ToolCalls[0].Name)
	}
}

func testListAndDelete(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := open(t, newStore, nil)
	for _, id := range []string{"b", "a", "c"} {
		if _, err := s.Create(ctx, id, map[string]string{"name": id}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct creation times
	}
	mustAppend(t, s, "a", session.Event{Kind: session.KindUser, StateDelta: map[string]*string{"x": session.Ptr("1")}})
	mustAppend(t, s, "a", session.Event{Kind: session.KindUser})
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range list {
		got = append(got, fmt.Sprintf("%s:%s:%d", in.ID, in.Meta["name"], in.LastSeq))
	}
	if diff := cmp.Diff([]string{"b:b:0", "a:a:2", "c:c:0"}, got); diff != "" {
		t.Fatalf("List, oldest first (-want +got):\n%s", diff)
	}

	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Delete again": s.Delete(ctx, "a"),
		"Append":       func() error { _, err := s.Append(ctx, "a", session.Event{Kind: session.KindUser}); return err }(),
		"Get":          func() error { _, err := s.Get(ctx, "a"); return err }(),
	} {
		if !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s after Delete: error = %v, want ErrNotFound", name, err)
		}
	}
	// A recreated ID starts empty: no events or state leak from the old one.
	mustCreate(t, s, "a")
	ev := mustAppend(t, s, "a", session.Event{Kind: session.KindUser})
	snap := mustGet(t, s, "a")
	if ev.Seq != 1 || ev.Turn != 1 || len(snap.State) != 0 || len(snap.Events) != 1 {
		t.Fatalf("recreated session: seq %d turn %d state %v events %d; want fresh", ev.Seq, ev.Turn, snap.State, len(snap.Events))
	}
	list, _ = s.List(ctx)
	if len(list) != 3 {
		t.Fatalf("List after delete+recreate has %d sessions, want 3", len(list))
	}
}

// capHook keeps the newest max "loaded/<agent>/<name>" keys of the
// event's agent: when an event sets such a key it predicts the state after
// the append and deletes the oldest others in the same StateDelta, the
// shape of a load cap written as a hook. Order is kept in "order/<agent>".
func capHook(max int) session.AppendHook {
	return func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
		if len(ev.StateDelta) == 0 {
			return next()
		}
		prefix := "loaded/" + ev.Agent + "/"
		var order []string
		if v := sess.State["order/"+ev.Agent]; v != "" {
			order = strings.Split(v, ",")
		}
		for _, k := range slices.Sorted(maps.Keys(ev.StateDelta)) {
			if name, ok := strings.CutPrefix(k, prefix); ok && ev.StateDelta[k] != nil {
				order = append(without(order, name), name)
			}
		}
		for len(order) > max {
			ev.StateDelta[prefix+order[0]] = nil
			ev.StateDelta["docs/"+ev.Agent+"/"+order[0]] = nil
			order = order[1:]
		}
		ev.StateDelta["order/"+ev.Agent] = session.Ptr(strings.Join(order, ","))
		return next()
	}
}

// loadedNames returns the names of agent's "loaded/<agent>/" keys, sorted.
func loadedNames(state map[string]string, agent string) []string {
	var out []string
	for k := range state {
		if name, ok := strings.CutPrefix(k, "loaded/"+agent+"/"); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func without(list []string, name string) []string {
	var out []string
	for _, n := range list {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}

func testHookRewrites(t *testing.T, newStore NewStore) {
	s := open(t, newStore, &session.Options{AppendHook: capHook(2)})
	id := mustCreate(t, s, "").ID
	for _, name := range []string{"a", "b", "c", "b", "d"} {
		mustAppend(t, s, id, session.Event{Kind: session.KindTool, Agent: "main", ToolCallID: "c-" + name, StateDelta: map[string]*string{
			"loaded/main/" + name: session.Ptr("1"), "docs/main/" + name: session.Ptr("*"),
		}})
	}
	snap := mustGet(t, s, id)
	if diff := cmp.Diff([]string{"b", "d"}, loadedNames(snap.State, "main")); diff != "" {
		t.Errorf("loaded after cap (-want +got):\n%s", diff)
	}
	if _, ok := snap.State["docs/main/c"]; ok {
		t.Error("evicted c kept its docs key")
	}
	if got := snap.State["order/main"]; got != "b,d" {
		t.Errorf("order = %q; want b,d", got)
	}
	// The hook's rewrite is what is persisted with the event.
	last := snap.Events[len(snap.Events)-1]
	if v, ok := last.StateDelta["loaded/main/c"]; !ok || v != nil {
		t.Errorf("stored delta of last event lacks the eviction of c: %v", last.StateDelta)
	}
}

func testHookVeto(t *testing.T, newStore NewStore) {
	errVeto := errors.New("policy says no")
	var sawEvents, sawSeq int
	hook := func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
		sawEvents = len(sess.Events)
		switch ev.Text {
		case "veto before":
			return errVeto
		case "veto after":
			if err := next(); err != nil {
				return err
			}
			sawSeq = int(ev.Seq)
			return errVeto
		case "drop":
			return nil
		case "twice":
			if err := next(); err != nil {
				return err
			}
			return next()
		case "break it":
			ev.Kind = "robot"
			return next()
		}
		return next()
	}
	s := open(t, newStore, &session.Options{AppendHook: hook})
	id := mustCreate(t, s, "").ID
	mustAppend(t, s, id, session.Event{Kind: session.KindUser, Text: "ok"})
	tests := []struct {
		text    string
		wantErr error
	}{
		{"veto before", errVeto},
		{"veto after", errVeto},
		{"drop", session.ErrDropped},
		{"twice", nil},
		{"break it", session.ErrInvalidEvent},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, err := s.Append(context.Background(), id, session.Event{Kind: session.KindUser, Text: tt.text,
				StateDelta: map[string]*string{"vetoed": session.Ptr(tt.text)}})
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("Append error = %v, want %v", err, tt.wantErr)
			}
			if sawEvents != 1 {
				t.Errorf("hook saw %d events in the snapshot, want 1", sawEvents)
			}
		})
	}
	if sawSeq != 2 {
		t.Errorf("hook saw Seq %d after next, want 2", sawSeq)
	}
	snap := mustGet(t, s, id)
	if len(snap.Events) != 1 || len(snap.State) != 0 {
		t.Fatalf("after vetoes: %d events, state %v; want 1 event, empty state", len(snap.Events), snap.State)
	}
	// No gap: the next accepted event takes the Seq a vetoed one had.
	if ev := mustAppend(t, s, id, session.Event{Kind: session.KindUser, Text: "ok"}); ev.Seq != 2 {
		t.Fatalf("Seq after vetoes = %d, want 2", ev.Seq)
	}
}

func testHookChain(t *testing.T, newStore NewStore) {
	var trace []string
	mk := func(name string) session.AppendHook {
		return func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
			trace = append(trace, name+">")
			ev.StateDelta = map[string]*string{"last": session.Ptr(name)}
			err := next()
			trace = append(trace, "<"+name)
			return err
		}
	}
	s := open(t, newStore, &session.Options{AppendHook: session.ChainAppendHooks(mk("outer"), nil, mk("inner"))})
	id := mustCreate(t, s, "").ID
	mustAppend(t, s, id, session.Event{Kind: session.KindUser})
	if diff := cmp.Diff([]string{"outer>", "inner>", "<inner", "<outer"}, trace); diff != "" {
		t.Errorf("hook order (-want +got):\n%s", diff)
	}
	if got := mustGet(t, s, id).State["last"]; got != "inner" {
		t.Errorf("state last = %q, want the inner hook's rewrite", got)
	}
}

func testConcurrent(t *testing.T, newStore NewStore) {
	const sessions, writers, perWriter = 4, 3, 12
	var hookCalls sync.Map
	hook := func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
		hookCalls.Store(sess.ID+ev.ID, true)
		return next()
	}
	s := open(t, newStore, &session.Options{AppendHook: hook})
	ctx := context.Background()
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = mustCreate(t, s, fmt.Sprintf("conc-%d", i)).ID
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions*writers)
	for _, id := range ids {
		for w := range writers {
			wg.Go(func() {
				prev := int64(0)
				for n := range perWriter {
					key := fmt.Sprintf("w%d", w)
					ev, err := s.Append(ctx, id, session.Event{Kind: session.KindUser, Agent: key, Text: fmt.Sprint(n),
						StateDelta: map[string]*string{key: session.Ptr(fmt.Sprint(n)), "last": session.Ptr(key)}})
					if err != nil {
						errs <- err
						return
					}
					if ev.Seq <= prev {
						errs <- fmt.Errorf("%s writer %d: Seq %d after %d", id, w, ev.Seq, prev)
						return
					}
					prev = ev.Seq
					if n%5 == 0 {
						if _, err := s.Get(ctx, id); err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, id := range ids {
		snap := mustGet(t, s, id)
		if len(snap.Events) != writers*perWriter {
			t.Fatalf("%s has %d events, want %d", id, len(snap.Events), writers*perWriter)
		}
		state := map[string]string{}
		for i, ev := range snap.Events {
			if ev.Seq != int64(i+1) || ev.Turn != i+1 {
				t.Fatalf("%s event %d has Seq %d Turn %d; want %d without gaps", id, i, ev.Seq, ev.Turn, i+1)
			}
			session.ApplyDelta(state, ev.StateDelta)
		}
		if diff := cmp.Diff(state, snap.State); diff != "" {
			t.Fatalf("%s: state differs from events' deltas applied in order (-fold +state):\n%s", id, diff)
		}
		for w := range writers {
			if got := snap.State[fmt.Sprintf("w%d", w)]; got != fmt.Sprint(perWriter-1) {
				t.Errorf("%s: w%d = %q, want %d", id, w, got, perWriter-1)
			}
		}
	}
	n := 0
	hookCalls.Range(func(any, any) bool { n++; return true })
	if n != sessions*writers*perWriter {
		t.Errorf("hook ran %d times, want %d", n, sessions*writers*perWriter)
	}
}

func testContextAndClose(t *testing.T, newStore NewStore) {
	s := newStore(t, nil)
	id := mustCreate(t, s, "").ID
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Append(ctx, id, session.Event{Kind: session.KindUser}); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with canceled context: error = %v, want context.Canceled", err)
	}
	if n := len(mustGet(t, s, id).Events); n != 0 {
		t.Errorf("canceled Append left %d events", n)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	bg := context.Background()
	_, errGet := s.Get(bg, id)
	_, errAppend := s.Append(bg, id, session.Event{Kind: session.KindUser})
	_, errCreate := s.Create(bg, "", nil)
	_, errList := s.List(bg)
	for name, err := range map[string]error{"Get": errGet, "Append": errAppend, "Create": errCreate, "List": errList, "Delete": s.Delete(bg, id)} {
		if !errors.Is(err, session.ErrClosed) {
			t.Errorf("%s after Close: error = %v, want ErrClosed", name, err)
		}
	}
}

// testState checks that State returns what Get says about the state and
// the newest Seq, as a copy, and ErrNotFound for a missing session.
func testState(t *testing.T, newStore NewStore) {
	s := open(t, newStore, nil)
	ctx := context.Background()
	sess := mustCreate(t, s, "st")
	if state, last, err := s.State(ctx, sess.ID); err != nil || len(state) != 0 || last != 0 {
		t.Fatalf("State of a new session = %v, %d, %v; want empty, 0, nil", state, last, err)
	}
	for i, d := range []map[string]*string{
		{"a": session.Ptr("1"), "b": session.Ptr("2")},
		{"a": nil},
		{"c": session.Ptr("3")},
	} {
		if _, err := s.Append(ctx, sess.ID, session.Event{Kind: session.KindState, StateDelta: d}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	got, last, err := s.State(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Get(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, full.State) || last != full.LastSeq() || last != 3 {
		t.Errorf("State = %v, %d; Get says %v, %d", got, last, full.State, full.LastSeq())
	}
	got["x"] = "mutated"
	if again, _, _ := s.State(ctx, sess.ID); again["x"] != "" {
		t.Error("State returned the store's own map, not a copy")
	}
	if _, _, err := s.State(ctx, "missing"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("State of a missing session: err = %v, want ErrNotFound", err)
	}
}

// testAppendFunc checks that AppendFunc builds from the current state,
// appends consecutive events, and appends nothing when the build fails,
// an event is invalid or a hook vetoes one of them.
func testAppendFunc(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	veto := errors.New("veto")
	s := open(t, newStore, &session.Options{AppendHook: func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
		if ev.Text == "vetoed" {
			return veto
		}
		return next()
	}})
	sess := mustCreate(t, s, "af")
	if _, err := s.Append(ctx, sess.ID, session.Event{Kind: session.KindState, StateDelta: map[string]*string{"n": session.Ptr("1")}}); err != nil {
		t.Fatal(err)
	}
	evs, err := s.AppendFunc(ctx, sess.ID, func(state map[string]string, last int64) ([]session.Event, error) {
		if state["n"] != "1" || last != 1 {
			return nil, fmt.Errorf("build saw state %v and last %d, want n=1 and 1", state, last)
		}
		state["scratch"] = "changing the copy is harmless"
		return []session.Event{
			{Kind: session.KindUser, Text: "hello"},
			{Kind: session.KindState, StateDelta: map[string]*string{"n": session.Ptr("2")}},
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Seq != 2 || evs[1].Seq != 3 || evs[0].Turn != 1 || evs[1].Turn != 1 {
		t.Fatalf("AppendFunc returned %+v", evs)
	}
	failures := []struct {
		name  string
		build session.BuildFunc
	}{
		{"build error", func(map[string]string, int64) ([]session.Event, error) { return nil, errors.New("no") }},
		{"invalid second event", func(map[string]string, int64) ([]session.Event, error) {
			return []session.Event{{Kind: session.KindUser, Text: "ok"}, {Kind: "bogus"}}, nil
		}},
		{"vetoed second event", func(map[string]string, int64) ([]session.Event, error) {
			return []session.Event{{Kind: session.KindUser, Text: "ok", StateDelta: map[string]*string{"n": session.Ptr("9")}}, {Kind: session.KindUser, Text: "vetoed"}}, nil
		}},
	}
	for _, f := range failures {
		if _, err := s.AppendFunc(ctx, sess.ID, f.build); err == nil {
			t.Errorf("%s: AppendFunc succeeded", f.name)
		}
		got, err := s.Get(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.LastSeq() != 3 || got.State["n"] != "2" || got.State["scratch"] != "" {
			t.Errorf("%s: session changed: last %d, state %v", f.name, got.LastSeq(), got.State)
		}
	}
	if _, err := s.AppendFunc(ctx, "missing", func(map[string]string, int64) ([]session.Event, error) { return nil, nil }); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("AppendFunc on a missing session: %v, want ErrNotFound", err)
	}
}

// testAppendFuncConcurrent increments a counter from many goroutines with
// AppendFunc: no update may be lost, and each goroutine's two events must
// be adjacent.
func testAppendFuncConcurrent(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := open(t, newStore, nil)
	sess := mustCreate(t, s, "inc")
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range n {
		wg.Go(func() {
			_, err := s.AppendFunc(ctx, sess.ID, func(state map[string]string, last int64) ([]session.Event, error) {
				v, _ := strconv.Atoi(state["count"])
				return []session.Event{
					{Kind: session.KindState, Text: fmt.Sprintf("g%d first", g)},
					{Kind: session.KindState, Text: fmt.Sprintf("g%d second", g), StateDelta: map[string]*string{"count": session.Ptr(strconv.Itoa(v + 1))}},
				}, nil
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State["count"] != strconv.Itoa(n) {
		t.Errorf("count = %q after %d increments: updates were lost", got.State["count"], n)
	}
	for i := 0; i+1 < len(got.Events); i += 2 {
		a, b := got.Events[i].Text, got.Events[i+1].Text
		if strings.TrimSuffix(a, " first") != strings.TrimSuffix(b, " second") {
			t.Errorf("events %d and %d are %q and %q: a batch was interleaved", i+1, i+2, a, b)
		}
	}
}
