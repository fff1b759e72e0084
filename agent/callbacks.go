package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/session"
)

// ModelCall is one model request of a run, as the model callbacks
// (Options.BeforeModel and Options.AfterModel) see it. The two callbacks
// of one step get the same ModelCall.
type ModelCall struct {
	// Agent is the agent's name in its kit, which its load state is kept
	// under (loadstate.LoadedPrefix(Agent)).
	Agent string
	// SessionID is the session the run records to.
	SessionID string
	// Step is the model step, 1 for the run's first request.
	Step int
	// Request is the request to the model: the messages and tools the
	// conversation built and the agent's options.
	Request *model.Request

	// store is the kit's store, which State reads; nil in a ModelCall
	// that no run made.
	store session.Store
}

// State reads the session's state (key → value) from the kit's store as
// it is now. In BeforeModel that is the state the request was built from
// unless another run on the session recorded a step in between; in
// AfterModel the answer is not recorded yet. The agent's loaded skills
// are the keys under loadstate.LoadedPrefix(Agent) with a non-empty
// value. The map is a copy, the caller's to keep.
func (c ModelCall) State(ctx context.Context) (map[string]string, error) {
	if c.store == nil {
		return nil, errors.New("agent: ModelCall.State: this call was not made by a run, so it has no store to read")
	}
	st, _, err := c.store.State(ctx, c.SessionID)
	if err != nil {
		return nil, fmt.Errorf("agent: ModelCall.State: session %q: %w", c.SessionID, err)
	}
	return st, nil
}
