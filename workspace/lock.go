package workspace

import (
	"context"
	"fmt"
	"os"
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

// lockFileHeld opens the workspace's lock file in the metadata root and
// holds an exclusive flock on it. If Sweep removed the workspace meanwhile,
// the held file is no longer the one at the path; the record and layout are
// then recreated and locking retried.
func (w *Workspace) lockFileHeld(ctx context.Context) (*os.File, error) {
	p := metaPath(w.id, lockName)
	for {
		if err := w.ensure(ctx); err != nil {
			return nil, err
		}
		f, same, err := w.tryLockFile(ctx, p)
		if err != nil {
			return nil, err
		}
		if same {
			return f, nil
		}
		unflock(f)
		f.Close()
	}
}

// tryLockFile opens and flocks the metadata file p and reports whether it
// is still the file at p once locked.
func (w *Workspace) tryLockFile(ctx context.Context, p string) (*os.File, bool, error) {
	meta, err := w.m.openMeta()
	if err != nil {
		return nil, false, err
	}
	defer meta.Close()
	f, err := meta.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("workspace %s: lock: %w", w.id, err)
	}
	if err := waitFlock(ctx, f, true); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("workspace %s: lock: %w", w.id, err)
	}
	held, err1 := f.Stat()
	now, err2 := meta.Lstat(p)
	return f, err1 == nil && err2 == nil && os.SameFile(held, now), nil
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
