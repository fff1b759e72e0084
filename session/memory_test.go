package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sessiontest"
)

var _ session.Store = (*session.MemoryStore)(nil)

func TestMemoryStoreConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T, opts *session.Options) session.Store {
		return session.NewMemoryStore(opts)
	})
}

func TestChainAppendHooksEmpty(t *testing.T) {
	if h := session.ChainAppendHooks(); h != nil {
		t.Error("ChainAppendHooks() is not nil")
	}
	if h := session.ChainAppendHooks(nil, nil); h != nil {
		t.Error("ChainAppendHooks(nil, nil) is not nil")
	}
}

// TestMemoryView: View shows what Get copies, under the session's lock,
// and reports a missing session and fn's error.
func TestMemoryView(t *testing.T) {
	ctx := context.Background()
	m := session.NewMemoryStore(nil)
	defer m.Close()
	s, err := m.Create(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Text: "hi", StateDelta: map[string]*string{"k": session.Ptr("v")}}); err != nil {
		t.Fatal(err)
	}
	got, err := m.Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = m.View(ctx, s.ID, func(v *session.Session) error {
		if len(v.Events) != 1 || v.Events[0].Text != "hi" || v.State["k"] != "v" || v.LastSeq() != got.LastSeq() {
			t.Errorf("View shows %+v; Get gave %+v", v, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := m.View(ctx, s.ID, func(*session.Session) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("fn's error: %v", err)
	}
	if err := m.View(ctx, "nope", func(*session.Session) error { return nil }); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("missing session: %v", err)
	}
}
