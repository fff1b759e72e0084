package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/skillkit/skillkit/tools"
)

// TransferName is the tool an agent with sub-agents offers to hand the
// rest of the user's turn to one of them.
const TransferName = "transfer_to_agent"

// toolArgs are the arguments of a sub-agent called as a tool.
type toolArgs struct {
	Request string `json:"request" jsonschema:"What the agent should do, in full: it sees only this request and its own earlier work in the session, not your conversation."`
}

// AsTool returns the agent as a tool another agent can call: the call's
// request becomes a user message addressed to this agent in the caller's
// session, the agent runs its turn there — with its own instructions,
// tools and skill state, so what it loads never enters the caller's
// requests — and its final answer is the tool's result. A run that fails
// (the step limit, say) is an error result the calling model sees; the
// context ending is the caller's failure.
//
// The tool is named after the agent and described by description, which
// tells the calling model when to use it.
func (a *Agent) AsTool(description string) (tools.Tool, error) {
	if strings.TrimSpace(description) == "" {
		return tools.Tool{}, fmt.Errorf("agent %q: AsTool: the description is empty; say when the calling model should use this agent", a.name)
	}
	t := tools.New(a.name, description, func(ctx context.Context, c tools.Call, in toolArgs) (tools.Result, error) {
		if strings.TrimSpace(in.Request) == "" {
			return tools.Errorf("Error: request is empty; say what %s should do", a.name), nil
		}
		if inChain(ctx, a.name) {
			return tools.Errorf("Error: agent %s is already working on this request further up; answer it yourself", a.name), nil
		}
		// Calls of this agent in one session run one after the other:
		// each is a turn of the agent's own history, which two at once
		// would interleave.
		unlock := a.lockSession(c.SessionID)
		defer unlock()
		answer, err := a.answer(ctx, c.SessionID, in.Request)
		switch {
		case err != nil && ctx.Err() != nil:
			return tools.Result{}, err
		case err != nil:
			return tools.Errorf("Error: agent %s did not finish: %v", a.name, err), nil
		}
		return tools.Result{Text: answer}, nil
	})
	if err := tools.Check([]tools.Tool{t}); err != nil {
		return tools.Tool{}, fmt.Errorf("agent %q: AsTool: %w", a.name, err)
	}
	return t, nil
}

// answer runs one turn in the session and returns the final answer.
func (a *Agent) answer(ctx context.Context, sessionID, message string) (string, error) {
	for ev, err := range a.Run(ctx, sessionID, message) {
		if err != nil {
			return "", err
		}
		if ev.Kind == KindAnswer {
			return ev.Text, nil
		}
	}
	return "", errors.New("the run ended without an answer")
}

// transferArgs are the arguments of the transfer tool.
type transferArgs struct {
	Agent string `json:"agent_name" jsonschema:"The name of the agent to hand the user's request to."`
}

// transferTool returns the framework tool that hands the turn to one of
// subs. Its result names the agent chosen; the runner reads the choice
// from the recorded call and result.
func transferTool(subs []*Agent) tools.Tool {
	names := make([]string, len(subs))
	var desc strings.Builder
	desc.WriteString("Hand the user's current request to another agent, which answers it instead of you. Agents:")
	for i, s := range subs {
		names[i] = s.name
		desc.WriteString(" " + s.name)
	}
	desc.WriteString(".")
	t := tools.New(TransferName, desc.String(), func(ctx context.Context, c tools.Call, in transferArgs) (tools.Result, error) {
		if !slices.Contains(names, in.Agent) {
			return tools.Errorf("Error: agent_name %q is not one of: %s", in.Agent, strings.Join(names, ", ")), nil
		}
		if inChain(ctx, in.Agent) {
			return tools.Errorf("Error: agent %s already handed this request on; answer it yourself", in.Agent), nil
		}
		return tools.Result{Text: transferText(in.Agent)}, nil
	})
	return tools.Framework(t)
}

// transferText is the result of a transfer to name, which the runner
// recognises.
func transferText(name string) string { return "transferred to " + name }

// chainKey keys, in a run's context, the agents whose runs enclose it
// (a caller of an agent tool, the agent that transferred).
type chainKey struct{}

// withChain returns ctx with name added to the chain of running agents.
func withChain(ctx context.Context, name string) context.Context {
	prev, _ := ctx.Value(chainKey{}).([]string)
	return context.WithValue(ctx, chainKey{}, append(slices.Clip(prev), name))
}

// inChain reports whether the agent name runs in ctx or encloses it: a
// call or transfer to it would loop.
func inChain(ctx context.Context, name string) bool {
	chain, _ := ctx.Value(chainKey{}).([]string)
	return slices.Contains(chain, name)
}

// sessionLocks serialises an agent's tool runs per session.
type sessionLocks struct {
	mu    sync.Mutex
	locks map[string]*sessionLock
}

type sessionLock struct {
	mu   sync.Mutex
	refs int
}

// lockSession locks the agent's runs as a tool in session id and returns
// the unlock; locks of sessions nobody waits for are dropped.
func (a *Agent) lockSession(id string) func() {
	l := &a.locks
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sessionLock{}
	}
	sl := l.locks[id]
	if sl == nil {
		sl = &sessionLock{}
		l.locks[id] = sl
	}
	sl.refs++
	l.mu.Unlock()
	sl.mu.Lock()
	return func() {
		sl.mu.Unlock()
		l.mu.Lock()
		if sl.refs--; sl.refs == 0 {
			delete(l.locks, id)
		}
		l.mu.Unlock()
	}
}
