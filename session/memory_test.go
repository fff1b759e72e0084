package session_test

import (
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
