package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestIDFor(t *testing.T) {
	long := strings.Repeat("a", 200)
	for _, tc := range []struct {
		session string
		same    bool
	}{
		{"chat-1", true},
		{"A.b_c-9", true},
		{"x-deadbeef", false}, // the hashed form's prefix is never used directly
		{".hidden", false},
		{"has space", false},
		{"é", false},
		{"", false},
		{long, false},
		{"../../etc", false},
	} {
		id := IDFor(tc.session)
		if (id == tc.session) != tc.same {
			t.Errorf("IDFor(%q) = %q; want it unchanged: %v", tc.session, id, tc.same)
		}
		if err := validName("workspace ID", id, maxIDLen); err != nil {
			t.Errorf("IDFor(%q) = %q, not a workspace ID: %v", tc.session, id, err)
		}
		if !tc.same && (!strings.HasPrefix(id, "x-") || IDFor(tc.session) != id) {
			t.Errorf("IDFor(%q) = %q; want a stable x- digest", tc.session, id)
		}
	}
	if IDFor("a b") == IDFor("a_b") || IDFor("x-1") == IDFor("x-2") {
		t.Error("different sessions share a workspace")
	}
}

// Opens of one new workspace at once make it once: every one succeeds and
// they share one workspace.
func TestOpenConcurrent(t *testing.T) {
	for _, plain := range []bool{true, false} {
		t.Run(fmt.Sprint("plain=", plain), func(t *testing.T) {
			m, err := NewTemp(t.Context(), &Options{PlainDirs: plain, InMemoryVolumes: true})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Discard(context.Background())
			for round := range 5 {
				id := fmt.Sprint("s", round)
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for range 8 {
					wg.Go(func() {
						_, err := m.Open(t.Context(), id)
						errs <- err
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
				}
			}
			if _, err := m.Sweep(t.Context()); err != nil && !errors.Is(err, ErrSweepDisabled) {
				t.Fatal(err)
			}
		})
	}
}
