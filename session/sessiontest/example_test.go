package sessiontest_test

import (
	"testing"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sessiontest"
)

// A store's own test file runs the whole suite against fresh stores. The
// in-memory store shown here is the reference every other store matches.
func ExampleRun() {
	// In a _test.go file:
	_ = func(t *testing.T) {
		sessiontest.Run(t, func(t *testing.T, opts *session.Options) session.Store {
			return session.NewMemoryStore(opts)
		})
	}
}
