package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/driver"
)

func TestRunHookPassesCommitError(t *testing.T) {
	errStore := errors.New("disk full")
	commit := func(*session.Event) error { return errStore }
	hook := func(ctx context.Context, s *session.Session, ev *session.Event, next func() error) error {
		return next()
	}
	ev := &session.Event{Kind: session.KindUser}
	err := driver.RunHook(context.Background(), hook, &session.Session{}, ev, commit)
	if err != errStore {
		t.Fatalf("error = %v, want the commit error unwrapped", err)
	}
	if err := driver.RunHook(context.Background(), nil, nil, ev, commit); err != errStore {
		t.Fatalf("nil hook: error = %v, want the commit error", err)
	}
}

func TestPrepareEvent(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("E", -3600))
	in := session.Event{Seq: 9, Turn: 9, Kind: session.KindUser, StateDelta: map[string]*string{"a": session.Ptr("1")}}
	got, err := driver.Prepare(in, now)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 0 || got.Turn != 0 || len(got.ID) != 32 || !got.Time.Equal(now) || got.Time.Location() != time.UTC {
		t.Fatalf("Prepare = %+v", got)
	}
	*got.StateDelta["a"] = "changed"
	if *in.StateDelta["a"] != "1" {
		t.Fatal("Prepare shares the delta with its input")
	}
}
