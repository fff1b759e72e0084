package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// fileView reads session id from path through a fresh Store without a
// cache: what the file holds, the oracle a cached Store must agree with.
func fileView(t *testing.T, path, id string) (*session.Session, error) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), path, &sqlitestore.Options{CacheSessions: -1})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	defer st.Close()
	return st.Get(context.Background(), id)
}

// checkAgrees fails unless every read st offers of session id (Get, State)
// is exactly what the file holds, down to nil against empty.
func checkAgrees(t *testing.T, st *sqlitestore.Store, id, when string) {
	t.Helper()
	ctx := context.Background()
	want, wantErr := fileView(t, st.Path(), id)
	got, err := st.Get(ctx, id)
	if wantErr != nil || err != nil {
		if !errors.Is(err, session.ErrNotFound) || !errors.Is(wantErr, session.ErrNotFound) {
			t.Fatalf("%s: Get = %v, the file says %v", when, err, wantErr)
		}
		if _, _, err := st.State(ctx, id); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("%s: State = %v, want ErrNotFound", when, err)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s: Get differs from the file (-file +store):\n%s", when, cmp.Diff(want, got))
	}
	state, last, err := st.State(ctx, id)
	if err != nil || !reflect.DeepEqual(want.State, state) || last != want.LastSeq() {
		t.Fatalf("%s: State = %v, %d, %v; the file has %v, %d", when, state, last, err, want.State, want.LastSeq())
	}
}

// sharedFile opens two Stores with the given cache setting on one new
// file, as two processes would, and creates session "s" through the
// first.
func sharedFile(t *testing.T, cache int) (path string, stores []*sqlitestore.Store) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "s.db")
	for range 2 {
		stores = append(stores, openStore(t, path, &sqlitestore.Options{CacheSessions: cache}))
	}
	if _, err := stores[0].Create(context.Background(), "s", nil); err != nil {
		t.Fatal(err)
	}
	return path, stores
}

// TestCacheAgreesWithFile appends events whose encoding is not the
// identity (empty lists, bytes that are not UTF-8, characters JSON
// escapes) and checks that the cached copy reads exactly as the file does,
// for the Store that wrote them and for one that caught up with them.
func TestCacheAgreesWithFile(t *testing.T) {
	bad := "\xff\xfe"
	events := []struct {
		name string
		ev   session.Event
	}{
		{"plain user message", session.Event{Kind: session.KindUser, Text: "hi"}},
		{"empty lists", session.Event{Kind: session.KindState, ToolCalls: []session.ToolCall{}, StateDelta: map[string]*string{}, Loads: []session.Load{}}},
		{"load with empty docs", session.Event{Kind: session.KindTool, ToolCallID: "c0", Loads: []session.Load{{Skill: "pdf", Docs: []string{}}, {Skill: "x", Docs: []string{"a.md"}, Inline: true}}}},
		{"escaped characters", session.Event{Kind: session.KindAssistant, Text: "<&>", ToolCalls: []session.ToolCall{{ID: "c1", Name: "t", Arguments: "{\"a\":\"<\u2028>\"}"}},
			StateDelta: map[string]*string{"k<>": session.Ptr("\u2029&"), "gone": nil}}},
		{"bytes that are not UTF-8", session.Event{Kind: session.KindAssistant, Text: bad, ToolCalls: []session.ToolCall{{ID: "c2", Name: "t", Arguments: bad}},
			StateDelta: map[string]*string{"bad" + bad: session.Ptr("v" + bad), "plain": session.Ptr(bad)}}},
		{"load naming bytes that are not UTF-8", session.Event{Kind: session.KindTool, ToolCallID: "c3", Loads: []session.Load{{Skill: bad, Docs: []string{bad}}}}},
		{"summary", session.Event{Kind: session.KindSummary, Text: "so far", Summarizes: 2}},
		{"lists a hook emptied", session.Event{Kind: session.KindAssistant, Text: "empty them", ToolCalls: []session.ToolCall{{ID: "c4", Name: "t"}},
			StateDelta: map[string]*string{"k": session.Ptr("v")}, Loads: []session.Load{{Skill: "pdf"}}}},
	}
	// The hook empties lists after the store normalised them, which the
	// file keeps as NULL.
	hook := func(ctx context.Context, _ *session.Session, ev *session.Event, next func() error) error {
		if ev.Text == "empty them" {
			ev.ToolCalls, ev.StateDelta, ev.Loads = []session.ToolCall{}, map[string]*string{}, []session.Load{}
		}
		return next()
	}
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "s.db")
			writer := openStore(t, path, &sqlitestore.Options{CacheSessions: mode.cache, AppendHook: hook})
			follower := openStore(t, path, &sqlitestore.Options{CacheSessions: mode.cache})
			if _, err := writer.Create(ctx, "s", map[string]string{"k": "v"}); err != nil {
				t.Fatal(err)
			}
			checkAgrees(t, follower, "s", "before any event")
			for i, tt := range events {
				var err error
				if i%2 == 0 {
					_, err = writer.Append(ctx, "s", tt.ev)
				} else {
					_, err = writer.AppendFunc(ctx, "s", func(map[string]string, int64) ([]session.Event, error) { return []session.Event{tt.ev}, nil })
				}
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				checkAgrees(t, writer, "s", tt.name+", writer")
				checkAgrees(t, follower, "s", tt.name+", follower")
			}
		})
	}
}

// TestCacheTwoStores changes a session through one Store while another,
// on the same file, has it cached: the second must never answer from a
// stale copy, whatever the first did.
func TestCacheTwoStores(t *testing.T) {
	user := func(text string) session.Event {
		return session.Event{Kind: session.KindUser, Text: text, StateDelta: map[string]*string{"last": session.Ptr(text)}}
	}
	appendAll := func(t *testing.T, st *sqlitestore.Store, id string, texts ...string) {
		t.Helper()
		for _, text := range texts {
			if _, err := st.Append(context.Background(), id, user(text)); err != nil {
				t.Fatal(err)
			}
		}
	}
	recreate := func(t *testing.T, st *sqlitestore.Store, id string, texts ...string) {
		t.Helper()
		if err := st.Delete(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Create(context.Background(), id, map[string]string{"incarnation": "2"}); err != nil {
			t.Fatal(err)
		}
		appendAll(t, st, id, texts...)
	}
	tests := []struct {
		name string
		// change runs through other while cached holds "s" (with events
		// a and b) in its cache.
		change func(t *testing.T, other *sqlitestore.Store)
	}{
		{"other appends", func(t *testing.T, o *sqlitestore.Store) { appendAll(t, o, "s", "c") }},
		{"other appends a batch", func(t *testing.T, o *sqlitestore.Store) {
			if _, err := o.AppendFunc(context.Background(), "s", func(map[string]string, int64) ([]session.Event, error) {
				return []session.Event{user("c"), user("d"), {Kind: session.KindState, StateDelta: map[string]*string{"last": nil}}}, nil
			}); err != nil {
				t.Fatal(err)
			}
		}},
		{"other deletes", func(t *testing.T, o *sqlitestore.Store) {
			if err := o.Delete(context.Background(), "s"); err != nil {
				t.Fatal(err)
			}
		}},
		{"other recreates with as many events", func(t *testing.T, o *sqlitestore.Store) { recreate(t, o, "s", "x", "y") }},
		{"other recreates with more events", func(t *testing.T, o *sqlitestore.Store) { recreate(t, o, "s", "x", "y", "z") }},
		{"other recreates with fewer events", func(t *testing.T, o *sqlitestore.Store) { recreate(t, o, "s", "x") }},
		{"other recreates empty", func(t *testing.T, o *sqlitestore.Store) { recreate(t, o, "s") }},
	}
	for _, mode := range cacheModes {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				ctx := context.Background()
				path, stores := sharedFile(t, mode.cache)
				cached, other := stores[0], stores[1]
				appendAll(t, cached, "s", "a", "b")
				checkAgrees(t, cached, "s", "before")
				tt.change(t, other)
				// Write first, read after: a write must not build on the
				// old copy, nor leave it in the cache.
				before, beforeErr := fileView(t, path, "s")
				_, err := cached.AppendFunc(ctx, "s", func(state map[string]string, last int64) ([]session.Event, error) {
					return []session.Event{{Kind: session.KindState, StateDelta: map[string]*string{
						"seen": session.Ptr(fmt.Sprintf("%s@%d", state["last"], last))}}}, nil
				})
				if beforeErr != nil {
					if !errors.Is(err, session.ErrNotFound) {
						t.Fatalf("AppendFunc on a deleted session: %v, want ErrNotFound", err)
					}
					if _, err := cached.Append(ctx, "s", user("c")); !errors.Is(err, session.ErrNotFound) {
						t.Fatalf("Append on a deleted session: %v, want ErrNotFound", err)
					}
					checkAgrees(t, cached, "s", "after the other store's change")
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				after, err := fileView(t, path, "s")
				if err != nil {
					t.Fatal(err)
				}
				if got, want := after.State["seen"], fmt.Sprintf("%s@%d", before.State["last"], before.LastSeq()); got != want {
					t.Fatalf("AppendFunc built on %q, want %q (the file's)", got, want)
				}
				checkAgrees(t, cached, "s", "after an AppendFunc following the other store's change")
				// Once more with Append, which reads nothing first.
				tt.change(t, other)
				if _, err := cached.Append(ctx, "s", user("after")); err != nil && !errors.Is(err, session.ErrNotFound) {
					t.Fatal(err)
				}
				checkAgrees(t, cached, "s", "after writing through the cached store")
				checkAgrees(t, other, "s", "the other store, after that")
			})
		}
	}
}

// TestCacheAlternatingWriters has two Stores on one file take turns
// writing one session, each reading it before it writes.
func TestCacheAlternatingWriters(t *testing.T) {
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			_, stores := sharedFile(t, mode.cache)
			for i := range 12 {
				st := stores[i%2]
				checkAgrees(t, st, "s", fmt.Sprintf("store %d before write %d", i%2, i))
				var err error
				if i%3 == 0 {
					_, err = st.Append(ctx, "s", session.Event{Kind: session.KindUser, Text: strconv.Itoa(i),
						StateDelta: map[string]*string{"n": session.Ptr(strconv.Itoa(i))}})
				} else {
					_, err = st.AppendFunc(ctx, "s", func(state map[string]string, last int64) ([]session.Event, error) {
						if last != int64(i) {
							return nil, fmt.Errorf("write %d sees last seq %d", i, last)
						}
						return []session.Event{{Kind: session.KindAssistant, Text: state["n"],
							StateDelta: map[string]*string{"n": session.Ptr(strconv.Itoa(i))}}}, nil
					})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for i, st := range stores {
				checkAgrees(t, st, "s", fmt.Sprintf("store %d at the end", i))
			}
		})
	}
}

// TestCacheConcurrentWriters counts with AppendFunc from goroutines on two
// Stores sharing a file, with reads in between: an increment built on a
// stale cached state would lose a count.
func TestCacheConcurrentWriters(t *testing.T) {
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			path, stores := sharedFile(t, mode.cache)
			const perStore, each = 3, 8
			var wg sync.WaitGroup
			for i, st := range stores {
				for g := range perStore {
					wg.Go(func() {
						for n := range each {
							if _, err := st.AppendFunc(ctx, "s", func(state map[string]string, _ int64) ([]session.Event, error) {
								v, _ := strconv.Atoi(state["count"])
								return []session.Event{
									{Kind: session.KindState, Text: fmt.Sprintf("%d/%d/%d", i, g, n)},
									{Kind: session.KindState, StateDelta: map[string]*string{"count": session.Ptr(strconv.Itoa(v + 1))}},
								}, nil
							}); err != nil {
								t.Error(err)
								return
							}
							if _, err := st.Get(ctx, "s"); err != nil {
								t.Error(err)
								return
							}
							if _, _, err := st.State(ctx, "s"); err != nil {
								t.Error(err)
								return
							}
						}
					})
				}
			}
			wg.Wait()
			want, err := fileView(t, path, "s")
			if err != nil {
				t.Fatal(err)
			}
			if got := want.State["count"]; got != strconv.Itoa(len(stores)*perStore*each) {
				t.Fatalf("count = %s after %d increments: an increment was built on a stale state", got, len(stores)*perStore*each)
			}
			state := map[string]string{}
			for i, ev := range want.Events {
				if ev.Seq != int64(i+1) {
					t.Fatalf("event %d has Seq %d", i, ev.Seq)
				}
				session.ApplyDelta(state, ev.StateDelta)
			}
			if !reflect.DeepEqual(state, want.State) {
				t.Fatalf("state %v is not the events' deltas folded (%v)", want.State, state)
			}
			for i, st := range stores {
				checkAgrees(t, st, "s", fmt.Sprintf("store %d at the end", i))
			}
		})
	}
}

// TestCacheEviction fills a cache of three sessions past its bound: the
// least recently used goes, reads count as use, Delete forgets, and an
// evicted session still reads correctly.
func TestCacheEviction(t *testing.T) {
	ctx := context.Background()
	const limit = 3
	st := openStore(t, filepath.Join(t.TempDir(), "s.db"), &sqlitestore.Options{CacheSessions: limit})
	steps := []struct {
		name string
		do   func() error
		want []string // most recently used first
	}{
		{"create up to the limit", func() error {
			for _, id := range []string{"s0", "s1", "s2"} {
				if _, err := st.Create(ctx, id, nil); err != nil {
					return err
				}
			}
			return nil
		}, []string{"s2", "s1", "s0"}},
		{"a read makes s0 most recent", func() error { _, err := st.Get(ctx, "s0"); return err }, []string{"s0", "s2", "s1"}},
		{"limit+1 evicts the least recently used", func() error { _, err := st.Create(ctx, "s3", nil); return err }, []string{"s3", "s0", "s2"}},
		{"State counts as use", func() error { _, _, err := st.State(ctx, "s2"); return err }, []string{"s2", "s3", "s0"}},
		{"an append counts as use", func() error {
			_, err := st.Append(ctx, "s0", session.Event{Kind: session.KindUser, Text: "x"})
			return err
		}, []string{"s0", "s2", "s3"}},
		{"reading the evicted s1 brings it back", func() error {
			s, err := st.Get(ctx, "s1")
			if err == nil && (s.ID != "s1" || len(s.Events) != 0) {
				err = fmt.Errorf("Get(s1) = %+v", s)
			}
			return err
		}, []string{"s1", "s0", "s2"}},
		{"Delete forgets", func() error { return st.Delete(ctx, "s0") }, []string{"s1", "s2"}},
		{"State of an uncached session reads it without caching it", func() error {
			_, last, err := st.State(ctx, "s3")
			if err == nil && last != 0 {
				err = fmt.Errorf("State(s3) says last seq %d", last)
			}
			return err
		}, []string{"s1", "s2"}},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(step.want, sqlitestore.CachedSessions(st)); diff != "" {
			t.Fatalf("%s: cached sessions (-want +got):\n%s", step.name, diff)
		}
	}
	checkAgrees(t, st, "s0", "deleted session")
	checkAgrees(t, st, "s3", "evicted session")

	off := openStore(t, filepath.Join(t.TempDir(), "off.db"), &sqlitestore.Options{CacheSessions: -1})
	if _, err := off.Create(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := off.Get(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if got := sqlitestore.CachedSessions(off); len(got) != 0 {
		t.Fatalf("a disabled cache holds %v", got)
	}
}

// TestCacheHandsOutCopies changes everything a Store returns, in every
// way a caller could, and checks the store's answers stay the file's.
func TestCacheHandsOutCopies(t *testing.T) {
	ev := session.Event{Kind: session.KindTool, ToolCallID: "c", Text: "t",
		StateDelta: map[string]*string{"k": session.Ptr("v"), "gone": nil},
		Loads:      []session.Load{{Skill: "pdf", Docs: []string{"a.md", "b.md"}}}}
	call := session.Event{Kind: session.KindAssistant, ToolCalls: []session.ToolCall{{ID: "c", Name: "t", Arguments: "{}"}}}
	mutateSession := func(s *session.Session) {
		s.Meta["m"] = "changed"
		s.State["k"] = "changed"
		s.State["new"] = "added"
		for i := range s.Events {
			e := &s.Events[i]
			e.Text = "changed"
			for k, v := range e.StateDelta {
				if v != nil {
					*v = "changed"
				}
				e.StateDelta[k+"2"] = nil
			}
			for j := range e.ToolCalls {
				e.ToolCalls[j].Name = "changed"
			}
			for j := range e.Loads {
				e.Loads[j].Docs[0] = "changed"
				e.Loads[j].Docs = append(e.Loads[j].Docs, "more")
			}
		}
		s.Events = append(s.Events[:1], session.Event{Kind: session.KindUser})
	}
	mutateEvent := func(e *session.Event) {
		s := &session.Session{Meta: map[string]string{}, State: map[string]string{}, Events: []session.Event{*e}}
		mutateSession(s)
	}
	tests := []struct {
		name   string
		mutate func(t *testing.T, st *sqlitestore.Store)
	}{
		{"Create's session", func(t *testing.T, st *sqlitestore.Store) {
			s, err := st.Create(context.Background(), "fresh", map[string]string{"m": "v"})
			if err != nil {
				t.Fatal(err)
			}
			s.Meta["m"] = "changed"
			s.State["k"] = "added"
			s.Events = append(s.Events, ev)
		}},
		{"Get's session", func(t *testing.T, st *sqlitestore.Store) {
			s, err := st.Get(context.Background(), "s")
			if err != nil {
				t.Fatal(err)
			}
			mutateSession(s)
		}},
		{"State's map", func(t *testing.T, st *sqlitestore.Store) {
			state, _, err := st.State(context.Background(), "s")
			if err != nil {
				t.Fatal(err)
			}
			state["k"] = "changed"
			state["new"] = "added"
		}},
		{"Append's event and its input", func(t *testing.T, st *sqlitestore.Store) {
			in := ev.Clone()
			got, err := st.Append(context.Background(), "s", in)
			if err != nil {
				t.Fatal(err)
			}
			mutateEvent(&in)
			mutateEvent(&got)
		}},
		{"AppendFunc's state, input and result", func(t *testing.T, st *sqlitestore.Store) {
			in := []session.Event{call.Clone(), ev.Clone()}
			got, err := st.AppendFunc(context.Background(), "s", func(state map[string]string, _ int64) ([]session.Event, error) {
				state["k"] = "changed in build"
				return in, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range in {
				mutateEvent(&in[i])
				mutateEvent(&got[i])
			}
		}},
		{"a hook's snapshot", func(t *testing.T, st *sqlitestore.Store) {
			if _, err := st.Append(context.Background(), "s", session.Event{Kind: session.KindUser, Text: "hooked"}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	hook := func(ctx context.Context, s *session.Session, e *session.Event, next func() error) error {
		if e.Text == "hooked" {
			mutateSession(s)
		}
		return next()
	}
	for _, mode := range cacheModes {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				ctx := context.Background()
				st := openStore(t, filepath.Join(t.TempDir(), "s.db"), &sqlitestore.Options{CacheSessions: mode.cache, AppendHook: hook})
				if _, err := st.Create(ctx, "s", map[string]string{"m": "v"}); err != nil {
					t.Fatal(err)
				}
				for _, e := range []session.Event{call, ev} {
					if _, err := st.Append(ctx, "s", e); err != nil {
						t.Fatal(err)
					}
				}
				checkAgrees(t, st, "s", "before")
				tt.mutate(t, st)
				checkAgrees(t, st, "s", "after changing what the store returned")
				checkAgrees(t, st, "fresh", "the created session")
			})
		}
	}
}
