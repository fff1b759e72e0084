package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skillkit/skillkit/session"
)

func TestChainAppendHooksEmpty(t *testing.T) {
	if h := session.ChainAppendHooks(); h != nil {
		t.Error("ChainAppendHooks() is not nil")
	}
	if h := session.ChainAppendHooks(nil, nil); h != nil {
		t.Error("ChainAppendHooks(nil, nil) is not nil")
	}
}

func TestRunAppendHookPassesCommitError(t *testing.T) {
	errStore := errors.New("disk full")
	commit := func(*session.Event) error { return errStore }
	hook := func(ctx context.Context, s *session.Session, ev *session.Event, next func() error) error {
		return next()
	}
	ev := &session.Event{Kind: session.KindUser}
	err := session.RunAppendHook(context.Background(), hook, &session.Session{}, ev, commit)
	if err != errStore {
		t.Fatalf("error = %v, want the commit error unwrapped", err)
	}
	if err := session.RunAppendHook(context.Background(), nil, nil, ev, commit); err != errStore {
		t.Fatalf("nil hook: error = %v, want the commit error", err)
	}
}

func TestPrepareEvent(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("E", -3600))
	in := session.Event{Seq: 9, Turn: 9, Kind: session.KindUser, StateDelta: map[string]*string{"a": session.Ptr("1")}}
	got, err := session.PrepareEvent(in, now)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 0 || got.Turn != 0 || len(got.ID) != 32 || !got.Time.Equal(now) || got.Time.Location() != time.UTC {
		t.Fatalf("PrepareEvent = %+v", got)
	}
	*got.StateDelta["a"] = "changed"
	if *in.StateDelta["a"] != "1" {
		t.Fatal("PrepareEvent shares the delta with its input")
	}
}
