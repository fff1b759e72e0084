package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Lock waits until no other command uses the workspace, in this process or
// any other, and returns the function that releases it. It gives up with
// ctx's error when ctx is done first. The lock is not reentrant. Locking and
// unlocking both record the workspace as used, so a long command does not
// look idle to Sweep.
func (w *Workspace) Lock(ctx context.Context) (unlock func(), err error) {
	select {
	case w.st.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("workspace %s: lock: %w", w.id, ctx.Err())
	}
	f, err := w.lockFileHeld(ctx)
	if err != nil {
		<-w.st.sem
		return nil, err
	}
	if err := w.touch(); err != nil {
		unflock(f)
		f.Close()
		<-w.st.sem
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = w.touch() // best effort: the lock is released regardless
			unflock(f)
			f.Close()
			<-w.st.sem
		})
	}, nil
}

// lockFileHeld opens the workspace lock file and holds an exclusive flock on
// it. If Sweep removed the workspace meanwhile, the held file is no longer
// the one at the path; the layout is then recreated and locking retried.
func (w *Workspace) lockFileHeld(ctx context.Context) (*os.File, error) {
	p := filepath.Join(w.dir, metaDir, lockName)
	for {
		if err := w.ensureLayout(); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("workspace %s: lock: %w", w.id, err)
		}
		if err := waitFlock(ctx, f, true); err != nil {
			f.Close()
			return nil, fmt.Errorf("workspace %s: lock: %w", w.id, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(p)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		unflock(f)
		f.Close()
	}
}

// lockFile takes a shared or exclusive flock on the file at p, creating it,
// and returns its release function.
func lockFile(ctx context.Context, p string, exclusive bool) (func(), error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("workspace: lock %s: %w", p, err)
	}
	if err := waitFlock(ctx, f, exclusive); err != nil {
		f.Close()
		return nil, fmt.Errorf("workspace: lock %s: %w", p, err)
	}
	return func() {
		unflock(f)
		f.Close()
	}, nil
}

// Poll bounds for waitFlock. A blocking flock cannot be interrupted by a
// context, so we poll with a non-blocking one and back off.
const (
	minLockPoll = time.Millisecond
	maxLockPoll = 50 * time.Millisecond
)

// waitFlock polls tryFlock until it succeeds or ctx is done.
func waitFlock(ctx context.Context, f *os.File, exclusive bool) error {
	wait := minLockPoll
	for {
		ok, err := tryFlock(f, exclusive)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, maxLockPoll)
	}
}
