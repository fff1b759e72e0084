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

func TestChainAppendHooksEmpty(t *testing.T) {
	if h := session.ChainAppendHooks(); h != nil {
		t.Error("ChainAppendHooks() is not nil")
	}
	if h := session.ChainAppendHooks(nil, nil); h != nil {
		t.Error("ChainAppendHooks(nil, nil) is not nil")
	}
}
