package workspace

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLockSerializes(t *testing.T) {
	m := newTestManager(t, nil)
	// Two Managers stand in for two processes: each has its own in-process
	// lock, so only the flock on the lock file keeps them apart.
	m2 := newTestManager(t, &Options{Root: m.Root()})
	ws := []*Workspace{openTest(t, m, "s"), openTest(t, m, "s"), openTest(t, m2, "s")}
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := ws[i%len(ws)].Lock(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			if n > maxInside.Load() {
				maxInside.Store(n)
			}
			time.Sleep(5 * time.Millisecond)
			inside.Add(-1)
			unlock()
			unlock() // idempotent
		}()
	}
	wg.Wait()
	if got := maxInside.Load(); got != 1 {
		t.Errorf("%d commands held the lock at once, want 1", got)
	}
}

func TestLockContext(t *testing.T) {
	m := newTestManager(t, nil)
	m2 := newTestManager(t, &Options{Root: m.Root()})
	w := openTest(t, m, "s")
	unlock, err := w.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, other := range map[string]*Workspace{"same process": openTest(t, m, "s"), "other process": openTest(t, m2, "s")} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			start := time.Now()
			if _, err := other.Lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Lock while held: err = %v, want deadline exceeded", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Lock returned %v after its deadline", d)
			}
			canceled, cancel2 := context.WithCancel(context.Background())
			cancel2()
			if _, err := other.Lock(canceled); !errors.Is(err, context.Canceled) {
				t.Errorf("Lock with canceled ctx: err = %v", err)
			}
		})
	}
	unlock()
	// Released: the other "process" gets it now.
	u2, err := openTest(t, m2, "s").Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	u2()
	// Different workspaces do not block each other.
	u3, err := openTest(t, m, "a").Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u3()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	u4, err := openTest(t, m, "b").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u4()
}
