package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
)

// Assistant is one answer of the model, as the provider returned it.
type Assistant struct {
	// Text is the answer's text; it may be empty when it only calls tools.
	Text string
	// Calls are the tool calls of the answer, in order, each with the
	// provider's ID and the arguments exactly as the model wrote them.
	// A call without an ID is given "call_<seq>" (with "_<n>" for the
	// n-th call after the first) when it is recorded.
	Calls []session.ToolCall
}

// Step is what Respond recorded for one answer.
type Step struct {
	// Events are the events as stored: the assistant message, one result
	// per call in the order of the calls, and a replacement catalog when
	// the skill set changed.
	Events []session.Event
	// Results are the calls' results in the order of the calls, with the
	// structured content and attachments the session does not keep.
	Results []tools.Result
}

// Respond records one answer of the model and runs its tool calls. The
// calls run at once (at most Options.MaxParallel together), outside the
// store's lock, against the load state and tools of the request the model
// answered; then the answer and every result are appended in one atomic
// step, with the state changes computed from the state at that moment, so
// a crash never leaves a call without its result and concurrent answers
// lose no change. Under the once lifetime the answer unloads what the
// request showed. A call of an unknown tool, arguments that are not one
// JSON object, a key given twice or a schema violation are recorded as
// error results the model sees. A handler's error (the context ended, a
// host failure) stops the answer: the other calls are cancelled, nothing
// is recorded, and the error names the call. Respond waits for every
// handler, so a handler that ignores its context holds it up.
//
// The calls of one answer all see the state as read when Respond is
// called, not each other's effects: a skill call and a workspace_exec call
// in the same answer run the command before the skill is loaded, so its
// files are not staged. Models that want a skill's scripts load it first
// and run them in a later answer.
func (c *Conversation) Respond(ctx context.Context, a Assistant) (*Step, error) {
	seen := make(map[string]int, len(a.Calls))
	for i, call := range a.Calls {
		switch j, dup := seen[call.ID]; {
		case call.Name == "":
			return nil, fmt.Errorf("%w: Calls[%d] has no tool name", ErrInvalidAnswer, i)
		case call.ID != "" && dup:
			return nil, fmt.Errorf("%w: Calls[%d] repeats the ID %q of Calls[%d]; each call needs its own ID", ErrInvalidAnswer, i, call.ID, j)
		}
		seen[call.ID] = i
	}
	state, _, err := c.store.State(ctx, c.id)
	if err != nil {
		return nil, err
	}
	view := loadstate.Of(state, c.agent)
	ts, err := c.toolsFor(ctx, view)
	if err != nil {
		return nil, err
	}
	snap := c.skills(ctx)
	co := c.catalogOptions(ctx, snap)
	call := tools.Call{Skills: snap, State: view, SessionID: c.id, Agent: c.agent}
	if c.opts.Renew != nil {
		call.Renew = func(ctx context.Context, stale *registry.Snapshot) (*registry.Snapshot, error) {
			if err := c.opts.Renew(ctx, stale); err != nil {
				return nil, err
			}
			return c.skills(ctx), nil
		}
	}
	results, err := c.run(ctx, a.Calls, ts, call)
	if err != nil {
		return nil, err
	}
	for i, res := range results {
		if res.IsError || len(res.Effects) == 0 {
			continue
		}
		// A tool may pass the model's words into its effects: what could
		// not be recorded (another agent's key, a path out of the skill)
		// is the call's error, seen by the model, and nothing is loaded.
		if err := loadstate.CheckEffects(res.Effects); err != nil {
			results[i] = tools.Errorf("Error: %s asked to load something that cannot be loaded (%v); nothing was loaded", a.Calls[i].Name, err)
		}
	}
	evs, err := c.store.AppendFunc(ctx, c.id, func(state map[string]string, lastSeq int64) ([]session.Event, error) {
		calls := assignIDs(a.Calls, lastSeq+1)
		asst := session.Event{Kind: session.KindAssistant, Agent: c.agent, Text: a.Text, ToolCalls: calls}
		if c.opts.Lifetime == loadstate.Once {
			if d := loadstate.Reset(state, c.agent); len(d) > 0 {
				asst.StateDelta = d
				session.ApplyDelta(state, d)
			}
		}
		out := []session.Event{asst}
		for i, res := range results {
			ev := session.Event{Kind: session.KindTool, Agent: c.agent, ToolCallID: calls[i].ID, ToolName: calls[i].Name, Text: res.Text, IsError: res.IsError}
			if !res.IsError && len(res.Effects) > 0 {
				ev.Loads = loadstate.Records(state, c.agent, res.Effects, c.opts.Lifetime)
				d, err := c.apply(state, res.Effects)
				if err != nil {
					return nil, fmt.Errorf("the effects of %s: %w", callName(i, calls[i]), err)
				}
				session.ApplyDelta(state, d)
				ad, err := c.act.activate(state, c.agent, ev.Loads)
				if err != nil {
					return nil, fmt.Errorf("the activations of %s: %w", callName(i, calls[i]), err)
				}
				ev.StateDelta = mergeDelta(d, ad)
			}
			out = append(out, ev)
		}
		// A skill set that changed during the turn is announced before the
		// next request, after what is already there.
		return c.withCatalog(ctx, out, state, snap, ts, co)
	})
	if err != nil {
		return nil, err
	}
	return &Step{Events: evs, Results: results}, nil
}

// catalogOptions returns the agent's catalog options with the catalog
// rendered now, when a renderer is set: the catalog is published inside
// the store's append, under its lock, where a renderer that is slow or
// reads the store itself would hold up every writer or wait forever.
func (c *Conversation) catalogOptions(ctx context.Context, snap *registry.Snapshot) *assembly.CatalogOptions {
	co := c.opts.Catalog
	if render := co.Render; render != nil {
		text := ""
		if snap != nil {
			text = render(ctx, snap.Summaries())
		}
		co.Render = func(context.Context, []skill.Summary) string { return text }
	}
	return &co
}

// withCatalog appends to out the event that publishes the agent's catalog
// when it differs from the one the agent saw last (state, as of the end
// of out).
func (c *Conversation) withCatalog(ctx context.Context, out []session.Event, state map[string]string, snap *registry.Snapshot, ts []tools.Tool, co *assembly.CatalogOptions) ([]session.Event, error) {
	cat, err := assembly.CatalogEvent(ctx, state, c.agent, snap, ts, co)
	if err != nil {
		return nil, err
	}
	if cat != nil {
		out = append(out, *cat)
	}
	return out, nil
}

// assignIDs gives every call without an ID one: "call_<seq>", then
// "_<n>" for the n-th call, made unique against the IDs the answer
// names itself.
func assignIDs(in []session.ToolCall, seq int64) []session.ToolCall {
	calls := slices.Clone(in)
	taken := make(map[string]bool, len(calls))
	for _, c := range calls {
		taken[c.ID] = true
	}
	for i := range calls {
		if calls[i].ID != "" {
			continue
		}
		id := "call_" + strconv.FormatInt(seq, 10)
		if i > 0 {
			id += "_" + strconv.Itoa(i)
		}
		for base, n := id, 2; taken[id]; n++ {
			id = base + "_" + strconv.Itoa(n)
		}
		taken[id] = true
		calls[i].ID = id
	}
	return calls
}

// callName names call i of an answer in errors.
func callName(i int, c session.ToolCall) string {
	if c.ID == "" {
		return fmt.Sprintf("Calls[%d] (%s)", i, c.Name)
	}
	return fmt.Sprintf("Calls[%d] (%s, ID %q)", i, c.Name, c.ID)
}

// run runs the calls against the tools, at most MaxParallel at once, and
// returns their results in order. The first handler error cancels the
// calls still running and is returned.
func (c *Conversation) run(ctx context.Context, calls []session.ToolCall, ts []tools.Tool, base tools.Call) ([]tools.Result, error) {
	results := make([]tools.Result, len(calls))
	switch len(calls) {
	case 0:
		return results, nil
	case 1:
		// One call runs here: a goroutine would cost more than the call.
		res, err := c.runCall(ctx, calls[0], ts, base)
		if err != nil {
			return nil, fmt.Errorf("conversation: %s: %w", callName(0, calls[0]), err)
		}
		results[0] = res
		return results, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, c.opts.MaxParallel)
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			res, err := c.runCall(ctx, call, ts, base)
			if err != nil {
				cancel(fmt.Errorf("conversation: %s: %w", callName(i, call), err))
				return
			}
			results[i] = res
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return results, nil
}

// runOne runs one call; a panic in the handler is an error, not a crash.
// runCall runs one call, through Options.WrapCall when it is set. A
// panic of the wrapper is the call's failure, as a handler's is: calls
// run on goroutines the caller cannot recover.
func (c *Conversation) runCall(ctx context.Context, call session.ToolCall, ts []tools.Tool, base tools.Call) (res tools.Result, err error) {
	if c.opts.WrapCall == nil {
		return runOne(ctx, call, ts, base)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("Options.WrapCall panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return c.opts.WrapCall(ctx, call, func(ctx context.Context) (tools.Result, error) { return runOne(ctx, call, ts, base) })
}

func runOne(ctx context.Context, call session.ToolCall, ts []tools.Tool, base tools.Call) (res tools.Result, err error) {
	i := slices.IndexFunc(ts, func(t tools.Tool) bool { return t.Name == call.Name })
	if i < 0 {
		names := make([]string, len(ts))
		for j, t := range ts {
			names[j] = t.Name
		}
		return tools.Errorf("Error: there is no tool %q; the tools are: %s", call.Name, strings.Join(names, ", ")), nil
	}
	if call.Arguments != "" && !json.Valid([]byte(call.Arguments)) {
		return tools.Errorf("Error: the arguments to %s are not valid JSON; send one JSON object that matches the tool's schema", call.Name), nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the handler panicked: %v\n%s", p, debug.Stack())
		}
	}()
	c := base
	c.Args, c.ID = json.RawMessage(call.Arguments), call.ID
	return ts[i].Call(ctx, c)
}

// Call records one tool call as if the model had answered with it alone
// (no text, an ID given when recorded) and returns its result: the thin
// form of Respond for driving a session by hand.
func (c *Conversation) Call(ctx context.Context, tool string, args json.RawMessage) (tools.Result, error) {
	step, err := c.Respond(ctx, Assistant{Calls: []session.ToolCall{{Name: tool, Arguments: string(args)}}})
	if err != nil {
		return tools.Result{}, err
	}
	return step.Results[0], nil
}

// apply is loadstate.Apply with the agent's cap, and the used list (what
// a catalog over its budget keeps longest) brought up to date.
func (c *Conversation) apply(state map[string]string, effects []tools.Effect) (map[string]*string, error) {
	d, err := loadstate.Apply(state, c.agent, effects, c.opts.MaxLoaded)
	if err != nil {
		return nil, err
	}
	for k, v := range loadstate.NoteUsed(state, c.agent, effects) {
		d[k] = v
	}
	return d, nil
}
