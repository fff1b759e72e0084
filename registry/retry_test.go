package registry

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestRetry(t *testing.T) {
	stale := fmt.Errorf("skill x: %w", ErrStale)
	for _, tc := range []struct {
		name        string
		staleTimes  int  // fn fails with ErrStale this many times, then succeeds
		noRenew     bool // renew is nil
		renewFails  bool
		wantCalls   int
		wantRenews  int
		wantErrIsSt bool
	}{
		{name: "fresh", staleTimes: 0, wantCalls: 1},
		{name: "stale once", staleTimes: 1, wantCalls: 2, wantRenews: 1},
		{name: "stale exactly up to the limit", staleTimes: StaleRetries, wantCalls: StaleRetries + 1, wantRenews: StaleRetries},
		{name: "stale past the limit", staleTimes: StaleRetries + 1, wantCalls: StaleRetries + 1, wantRenews: StaleRetries, wantErrIsSt: true},
		{name: "no renew", staleTimes: 1, noRenew: true, wantCalls: 1, wantErrIsSt: true},
		{name: "renew fails", staleTimes: 1, renewFails: true, wantCalls: 1, wantRenews: 1, wantErrIsSt: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := &Snapshot{}
			calls, renews := 0, 0
			var seen []*Snapshot
			fn := func(s *Snapshot) (int, error) {
				calls++
				seen = append(seen, s)
				if calls <= tc.staleTimes {
					return calls, stale
				}
				return calls, nil
			}
			renew := func(_ context.Context, old *Snapshot) (*Snapshot, error) {
				renews++
				if old != seen[len(seen)-1] {
					t.Errorf("renew got %p, not the snapshot that was stale", old)
				}
				if tc.renewFails {
					return nil, errors.New("refresh failed")
				}
				return &Snapshot{}, nil
			}
			if tc.noRenew {
				renew = nil
			}
			v, err := Retry(context.Background(), first, renew, fn)
			if calls != tc.wantCalls || renews != tc.wantRenews || errors.Is(err, ErrStale) != tc.wantErrIsSt || v != calls {
				t.Errorf("calls %d renews %d err %v v %d; want calls %d renews %d stale %v", calls, renews, err, v, tc.wantCalls, tc.wantRenews, tc.wantErrIsSt)
			}
			if seen[0] != first {
				t.Error("the first call did not get the snapshot given")
			}
		})
	}
}
