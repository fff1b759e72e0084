package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// closeCounter counts its Close calls.
type closeCounter struct{ n atomic.Int32 }

func (c *closeCounter) Close() error { c.n.Add(1); return nil }

// attachLocked attaches c to w while holding its lock, as a command that
// starts something in the background does.
func attachLocked(t *testing.T, w *Workspace, c *closeCounter) func() {
	t.Helper()
	unlock, err := w.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	detach, err := w.Attach(c)
	if err != nil {
		t.Fatal(err)
	}
	return detach
}

// TestAttach: what is attached to a workspace is closed, once, when the
// workspace is removed (Remove, Sweep, Discard) or its Manager closes, and
// not once detached; Sweep leaves a workspace with something attached
// alone; a handle of a removed workspace refuses to attach.
func TestAttach(t *testing.T) {
	ctx := context.Background()
	t.Run("Remove closes what is attached", func(t *testing.T) {
		m := newTestManager(t, nil)
		w := openTest(t, m, "s1")
		var a, b closeCounter
		attachLocked(t, w, &a)
		detachB := attachLocked(t, w, &b)
		detachB()
		detachB() // twice does nothing
		if err := m.Remove(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if a.n.Load() != 1 || b.n.Load() != 0 {
			t.Errorf("closed %d and %d times, want 1 and 0 (detached)", a.n.Load(), b.n.Load())
		}
		if _, err := w.Attach(&a); !errors.Is(err, ErrRemoved) {
			t.Errorf("Attach on a removed workspace's handle: %v, want ErrRemoved", err)
		}
		// Opened again, it takes attachments again.
		w = openTest(t, m, "s1")
		var c closeCounter
		attachLocked(t, w, &c)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if a.n.Load() != 1 || c.n.Load() != 1 {
			t.Errorf("after Close: closed %d and %d times, want 1 and 1", a.n.Load(), c.n.Load())
		}
	})
	t.Run("Sweep skips a workspace in use, then removes it", func(t *testing.T) {
		const ttl = time.Hour
		m := newTestManager(t, &Options{TTL: ttl})
		w := openTest(t, m, "bg")
		var a closeCounter
		detach := attachLocked(t, w, &a)
		old := time.Now().Add(-2 * ttl)
		if err := os.Chtimes(filepath.Join(m.MetaRoot(), w.ID(), usedName), old, old); err != nil {
			t.Fatal(err)
		}
		if removed, err := m.Sweep(ctx); err != nil || len(removed) != 0 {
			t.Fatalf("Sweep removed %v, %v; want nothing while attached", removed, err)
		}
		detach()
		if removed, err := m.Sweep(ctx); err != nil || len(removed) != 1 {
			t.Fatalf("Sweep removed %v, %v; want the detached workspace", removed, err)
		}
		if a.n.Load() != 0 {
			t.Errorf("a detached closer was closed %d times", a.n.Load())
		}
	})
	t.Run("Discard closes what is attached", func(t *testing.T) {
		m, err := NewTemp(ctx, &Options{InMemoryVolumes: true})
		if err != nil {
			t.Fatal(err)
		}
		var a closeCounter
		attachLocked(t, openTest(t, m, "tmp"), &a)
		if err := m.Discard(ctx); err != nil {
			t.Fatal(err)
		}
		if a.n.Load() != 1 {
			t.Errorf("closed %d times, want 1", a.n.Load())
		}
	})
	t.Run("nil closer", func(t *testing.T) {
		if _, err := openTest(t, newTestManager(t, nil), "n").Attach(nil); err == nil {
			t.Error("Attach(nil) succeeded")
		}
	})
}
