package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/session"
)

// crashDelta is the state change of the event with the given seq; the
// check recomputes it to see nothing was half-written.
func crashDelta(seq int64) map[string]*string {
	return map[string]*string{
		"counter":                     session.Ptr(strconv.FormatInt(seq, 10)),
		fmt.Sprintf("k%d", seq%5):     session.Ptr(fmt.Sprintf("v%d", seq)),
		fmt.Sprintf("k%d", (seq+2)%5): nil,
	}
}

// With appendonly yes and appendfsync always, every append Redis
// acknowledged survives kill -9 of the server: after a restart on the same
// directory every acknowledged event is there, whole, and the state is
// its events' deltas applied in order.
func TestCrashKeepsAcknowledgedAppends(t *testing.T) {
	srv := startServer(t, "--appendonly", "yes", "--appendfsync", "always", "--save", "")
	st := openStore(t, srv, nil)
	ctx := context.Background()
	raw := rawClient(t, srv)
	if got := raw.ConfigGet(ctx, "appendfsync").Val()["appendfsync"]; got != "always" {
		t.Fatalf("server runs with appendfsync %q, want always", got)
	}
	ids := []string{"crash-a", "crash-b"}
	for _, id := range ids {
		if _, err := st.Create(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	const minAcked = 200 // per session before the kill
	// acked[id] are the events Append returned for, by Seq; one writer
	// per session keeps appending until the kill makes Append fail.
	acked := make(map[string]map[int64]session.Event)
	var mu sync.Mutex
	var wg sync.WaitGroup
	enough := make(chan struct{}, len(ids))
	for _, id := range ids {
		acked[id] = map[int64]session.Event{}
		wg.Go(func() {
			for n := int64(1); ; n++ {
				ev, err := st.Append(ctx, id, session.Event{Kind: session.KindUser, Text: strconv.FormatInt(n, 10), StateDelta: crashDelta(n)})
				if err != nil {
					return
				}
				mu.Lock()
				acked[id][ev.Seq] = ev
				mu.Unlock()
				if n == minAcked {
					enough <- struct{}{}
				}
			}
		})
	}
	for range ids {
		select {
		case <-enough:
		case <-time.After(30 * time.Second):
			t.Fatalf("fewer than %d appends acknowledged in 30s", minAcked)
		}
	}
	srv.kill() // mid-append: the writers are still going
	wg.Wait()
	srv.restart()

	for _, id := range ids {
		s, err := st.Get(ctx, id) // the same store: it reconnects
		if err != nil {
			t.Fatalf("Get(%s) after the restart: %v", id, err)
		}
		if len(acked[id]) < minAcked {
			t.Fatalf("%s: only %d appends acknowledged", id, len(acked[id]))
		}
		for seq, want := range acked[id] {
			if seq > s.LastSeq() {
				t.Fatalf("%s: acknowledged event %d lost; the session ends at %d", id, seq, s.LastSeq())
			}
			if diff := cmp.Diff(want, s.Events[seq-1]); diff != "" {
				t.Fatalf("%s: event %d differs from what Append returned (-acked +stored):\n%s", id, seq, diff)
			}
		}
		state := map[string]string{}
		for i, ev := range s.Events {
			if ev.Seq != int64(i+1) || ev.Text != strconv.Itoa(i+1) {
				t.Fatalf("%s: event %d has Seq %d text %q", id, i+1, ev.Seq, ev.Text)
			}
			if diff := cmp.Diff(crashDelta(ev.Seq), ev.StateDelta); diff != "" {
				t.Fatalf("%s: event %d was stored with another delta (-want +got):\n%s", id, ev.Seq, diff)
			}
			session.ApplyDelta(state, ev.StateDelta)
		}
		if diff := cmp.Diff(state, s.State); diff != "" {
			t.Fatalf("%s: state is not its events' deltas (-fold +state):\n%s", id, diff)
		}
		t.Logf("%s: %d acknowledged, %d stored after kill -9", id, len(acked[id]), len(s.Events))
	}
}
