// Package agent runs a model over a skills kit: one Run is one turn of a
// named agent in a session — the user's message is recorded, then the
// model is asked for the next answer, its tool calls are run and
// recorded, and it is asked again, until it answers without calling a
// tool or the step limit is reached.
//
// An Agent joins three things: the kit (a *skillkit.Kit, which holds the
// agent's configuration — its instructions as AgentOptions.System, its own
// tools, lifetime, placement, cap and catalog — and the session store),
// the agent's name in that kit, and a model.Model. Run yields what happens
// as it happens, as an iterator:
//
//	a, err := agent.New(kit, "assistant", m, nil)
//	for ev, err := range a.Run(ctx, sessionID, "Summarise data.csv") {
//		if err != nil { ... }            // the last value of a failed run
//		if ev.Kind == agent.KindAnswer { fmt.Println(ev.Text) }
//	}
//
// Every step is recorded whole or not at all (conversation.Respond appends
// an answer with all its results in one store transaction), so a run that
// is cancelled through its context, or whose caller stops ranging, leaves
// the session as it was after the last recorded step.
//
// # Callbacks
//
// Options.BeforeModel and Options.AfterModel are called around every
// model request with a ModelCall: the agent, the session, the step and
// the request, and ModelCall.State to read the session's state, such as
// the skills loaded for the agent (the keys under
// loadstate.LoadedPrefix). Options.BeforeTool and Options.AfterTool are
// called around every tool call, in the goroutine that runs it. An error
// of any ends the run.
//
// # Sub-agents
//
// An agent can call another as a tool (AsTool), or hand it the user's
// turn (Options.SubAgents and the transfer_to_agent tool). Either way the
// other agent records its turn in the same session under its own name,
// with its own instructions and skill state: a skill it loads never
// enters the caller's requests.
//
// # Tracing
//
// A run emits OpenTelemetry spans to Options.TracerProvider (nil: the
// global provider), as children of the span in the run's context:
//
//   - "invoke_agent <name>" for the run: gen_ai.operation.name
//     invoke_agent, gen_ai.agent.name, gen_ai.conversation.id (the
//     session), gen_ai.request.model where the model has a Name method,
//     skillkit.agent.steps (the steps begun) and the run's token usage;
//     its error, if the run fails (a caller that stops ranging is no
//     failure: skillkit.agent.stopped).
//   - "chat <model>" per model request, under the run: gen_ai.operation.name
//     chat, gen_ai.request.model, gen_ai.response.model, gen_ai.response.id,
//     gen_ai.response.finish_reasons, gen_ai.usage.input_tokens (cached
//     ones included), gen_ai.usage.output_tokens,
//     gen_ai.usage.cache_read.input_tokens, skillkit.agent.step, and
//     error.type with the error when the model fails.
//   - "execute_tool <tool>" per tool call, under the run, from the moment
//     the call starts to its result: gen_ai.operation.name execute_tool,
//     gen_ai.tool.name, gen_ai.tool.call.id (when the provider gave one),
//     skillkit.tool.error (an Error status too) and skillkit.tool.loads
//     (the loads it asked for). The spans a tool makes itself
//     (workspace_exec's workspace spans) are its children.
//
// No span holds a prompt, an answer, tool arguments or a result.
package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/internal/tracing"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxSteps is the step limit of a run when Options.MaxSteps is 0.
const DefaultMaxSteps = 32

// Errors a run ends with, for callers to branch on with errors.Is.
var (
	// ErrMaxSteps: the model still called tools at the last step the
	// limit allows. Every step up to it is recorded, each call with its
	// result, so the session can go on with the next user message; the
	// steps' usage came with their KindResponse events.
	ErrMaxSteps = errors.New("agent: the step limit was reached while the model still called tools")
	// ErrInvalidLoadRequest: a declared load (WithSkillLoads) is
	// malformed, conflicts with another, names a document the skill does
	// not have, or the batch exceeds the agent's cap. It is
	// loadstate.ErrInvalidLoadRequest.
	ErrInvalidLoadRequest = loadstate.ErrInvalidLoadRequest
	// ErrSkillUnavailable: a declared load names a skill this request
	// cannot see or whose instructions cannot be read. It is
	// loadstate.ErrSkillUnavailable.
	ErrSkillUnavailable = loadstate.ErrSkillUnavailable
	// ErrSkillLoadingUnsupported: a run declares loads (WithSkillLoads)
	// for an agent that loads no skills — its tools hold none of the
	// skill tools that load instructions (skill, skill_load,
	// skill_select_docs), so nothing would keep or show them. Nothing is
	// recorded and the model is not asked.
	ErrSkillLoadingUnsupported = errors.New("agent: the agent does not load skills")
)

// Options configures an Agent. A nil *Options, like the zero value, means
// the defaults.
type Options struct {
	// MaxSteps bounds the model requests of one run; 0 means
	// DefaultMaxSteps.
	MaxSteps int
	// Stream asks the model for streamed answers (Model.Stream) and
	// yields their text as KindText events while it arrives; false asks
	// for whole answers (Model.Generate).
	Stream bool
	// Output, when set, is sent with every request of a run: the final
	// answer (the one without tool calls) is then one JSON value valid
	// against its schema, as far as the provider enforces it. Nil asks
	// for text.
	Output *model.OutputSchema
	// CacheKey is sent with every request as the provider's prompt-cache
	// key (model.Request.CacheKey), so requests that share a prefix reach
	// the same cache; WithCacheKey overrides it for a run (a per-user or
	// per-session key, say). Empty sends none.
	CacheKey string
	// Temperature is the sampling temperature of every request; nil
	// leaves it to the provider.
	Temperature *float64
	// MaxTokens bounds the tokens of each answer; nil leaves it to the
	// provider.
	MaxTokens *int
	// TracerProvider receives the run's spans: "invoke_agent <name>" per
	// Run, and under it "chat <model>" per model request and
	// "execute_tool <tool>" per tool result, with the GenAI semantic
	// conventions' attributes (see the package documentation). Nil means
	// otel.GetTracerProvider(), a no-op unless the application installed
	// a provider.
	TracerProvider trace.TracerProvider
	// BeforeModel, when set, is called before each model request, with
	// the request about to be sent (which it may change: the model gets
	// it as BeforeModel leaves it). An error ends the run with that error
	// wrapped, naming Options.BeforeModel, before the model is asked; the
	// steps before stay recorded.
	BeforeModel func(ctx context.Context, call ModelCall) error
	// AfterModel, when set, is called after each model request with its
	// answer, or with the error the run would end with (resp is then
	// nil). The answer is recorded as resp holds it when AfterModel
	// returns. An error ends the run with that error wrapped, naming
	// Options.AfterModel, and the answer is not recorded. It is not called
	// when the caller stops ranging during a streamed answer.
	AfterModel func(ctx context.Context, call ModelCall, resp *model.Response, err error) error
	// BeforeTool, when set, is called before each tool call runs, in the
	// goroutine that runs it. An error fails the call as a host failure
	// would: the answer is not recorded and the run ends with the error,
	// naming Options.BeforeTool.
	BeforeTool func(ctx context.Context, call ToolCall) error
	// AfterTool, when set, is called after each tool call with its
	// result (which it may change: the result is recorded as AfterTool
	// leaves it) or the handler's error. An error ends the run as
	// BeforeTool's does.
	AfterTool func(ctx context.Context, call ToolCall, res *tools.Result, err error) error
	// Tools are tools of the runner for this agent, offered after the
	// kit's tools for it: tools the kit's configuration cannot hold, such
	// as another agent called as a tool (AsTool). Their names must differ
	// from the agent's tools in the kit.
	Tools []tools.Tool
	// SubAgents are agents of the same kit this agent can hand the
	// user's turn to. With any, the agent offers transfer_to_agent (a
	// framework tool); after an answer that transfers, the chosen agent
	// runs its turn on the same user message in the same session — the
	// run yields its events, and its answer ends the run. Each agent
	// keeps its own skill state in the session, so what one loads never
	// enters another's requests.
	SubAgents []*Agent
	// Compaction, when set, keeps each request within a token budget by
	// summarising the older history first. Nil never compacts.
	Compaction *Compaction
	// FencedCode, when set, runs the shell and Python code blocks of an
	// answer that calls no tool, through workspace_exec in the session's
	// workspace, as calls the runtime makes for the model, and asks the
	// model again with their results. Nil, the default, runs nothing: code
	// in a reply is most often an illustration for the reader, and running
	// it unasked executes model output that no tool schema checked. It
	// needs workspace_exec (skillkit.Options.Exec), which keeps the code in
	// the sandbox.
	FencedCode *FencedCode
}

// FencedCode configures the running of code blocks in answers.
type FencedCode struct {
	// MaxRounds bounds the answers of one run whose code is run; 0 means
	// DefaultFencedRounds. A later answer with code ends the run as a text
	// answer, so a model that keeps illustrating still answers.
	MaxRounds int
}

// DefaultFencedRounds is FencedCode.MaxRounds when 0.
const DefaultFencedRounds = 3

// ToolCall is what the tool callbacks see of one call.
type ToolCall struct {
	// Agent is the calling agent.
	Agent string
	// SessionID is the run's session.
	SessionID string
	// Step is the model step whose answer made the call.
	Step int
	// Call is the call as the model made it: its provider ID ("" when it
	// had none; one is given when it is recorded), tool name and
	// arguments.
	Call session.ToolCall
}

// Agent is a named agent of a kit, answered by a model. It is safe for
// concurrent use; concurrent runs on one session are recorded one step
// after the other.
type Agent struct {
	kit    *skillkit.Kit
	name   string
	model  model.Model
	opts   Options
	tracer trace.Tracer
	// compact is the checked Options.Compaction (nil: never).
	compact *compactor
	// execName is the name workspace_exec goes by, for FencedCode.
	execName string
	// locks serialise the agent's runs as a tool per session (AsTool).
	locks sessionLocks
}

// New returns the agent name of kit, answered by m. The agent's
// instructions, tools and load settings are the kit's for that name
// (skillkit.Options.Agents[name], or Options.Agent).
func New(kit *skillkit.Kit, name string, m model.Model, opts *Options) (*Agent, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case kit == nil:
		return nil, errors.New("agent: the kit is nil; build one with skillkit.New")
	case m == nil:
		return nil, errors.New("agent: the model is nil; pass a model.Model such as one of model/openai")
	case o.MaxSteps < 0:
		return nil, fmt.Errorf("agent: Options.MaxSteps is %d; use 0 for %d or a positive count", o.MaxSteps, DefaultMaxSteps)
	}
	if err := conversation.CheckAgent(name); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if o.Output != nil {
		if _, err := o.Output.SchemaName(); err != nil {
			return nil, fmt.Errorf("agent: Options.Output: %w", err)
		}
	}
	if act := kit.AgentOptions(name).Activation; act != nil && len(act.Rules) > 0 && o.Output != nil {
		return nil, fmt.Errorf("agent %q: Options.Output cannot be combined with the agent's tool activation (skillkit AgentOptions.Activation): a final answer held to a schema cannot call the tools a load activates; drop one of them", name)
	}
	if err := checkSubAgents(kit, name, o.SubAgents); err != nil {
		return nil, err
	}
	comp, err := newCompactor(o.Compaction, m)
	if err != nil {
		return nil, fmt.Errorf("agent %q: Options.%w", name, err)
	}
	execName := ""
	if o.FencedCode != nil {
		fc := *o.FencedCode
		switch {
		case fc.MaxRounds < 0:
			return nil, fmt.Errorf("agent %q: Options.FencedCode.MaxRounds is %d; use 0 for %d or a positive count", name, fc.MaxRounds, DefaultFencedRounds)
		case fc.MaxRounds == 0:
			fc.MaxRounds = DefaultFencedRounds
		}
		o.FencedCode = &fc
		ts, err := kit.Tools(context.Background(), name)
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", name, err)
		}
		if execName = execToolName(ts); execName == "" {
			return nil, fmt.Errorf("agent %q: Options.FencedCode needs workspace_exec, which the agent does not offer; set skillkit.Options.Exec (and keep workspace_exec in AgentOptions.SkillTools)", name)
		}
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	o.SubAgents = slices.Clone(o.SubAgents)
	o.Tools = slices.Clone(o.Tools)
	return &Agent{kit: kit, name: name, model: m, opts: o, tracer: tracing.Tracer(o.TracerProvider, tracerName), compact: comp, execName: execName}, nil
}

// checkSubAgents checks that subs are distinct agents of kit other than
// the agent name.
func checkSubAgents(kit *skillkit.Kit, name string, subs []*Agent) error {
	seen := map[string]bool{}
	for i, s := range subs {
		switch {
		case s == nil:
			return fmt.Errorf("agent %q: Options.SubAgents[%d] is nil", name, i)
		case s.kit != kit:
			return fmt.Errorf("agent %q: Options.SubAgents[%d] (%q) belongs to another kit; sub-agents share the kit, so that they share its sessions", name, i, s.name)
		case s.name == name:
			return fmt.Errorf("agent %q: Options.SubAgents[%d] is the agent itself", name, i)
		case seen[s.name]:
			return fmt.Errorf("agent %q: Options.SubAgents[%d]: agent %q is listed twice", name, i, s.name)
		}
		seen[s.name] = true
	}
	return nil
}

// Name returns the agent's name in its kit.
func (a *Agent) Name() string { return a.name }

// RunOption configures one run.
type RunOption func(*runConfig)

// runConfig is what the run options set.
type runConfig struct {
	loads    []loadstate.Declaration
	open     []skillkit.OpenOption
	state    map[string]any
	cacheKey *string
}

// WithCacheKey sends key as the prompt-cache key of this run's requests,
// instead of Options.CacheKey.
func WithCacheKey(key string) RunOption {
	return func(c *runConfig) { c.cacheKey = &key }
}

// WithTools adds tools to this run's requests, after the agent's own.
func WithTools(ts ...tools.Tool) RunOption {
	return func(c *runConfig) { c.open = append(c.open, skillkit.WithTools(ts...)) }
}

// WithCatalogRender renders this run's catalog with render (see
// assembly.CatalogOptions.Render): a per-request overview, made from the
// skills the request sees, that changes the text only — the skill tools
// and what they load stay the same.
func WithCatalogRender(render func(ctx context.Context, skills []skill.Summary) string) RunOption {
	return func(c *runConfig) { c.open = append(c.open, skillkit.WithCatalogRender(render)) }
}

// WithGuidance publishes g as this run's tooling guidance after the
// catalog (see assembly.Guidance): Exec replaces the line about
// workspace_exec, which stays offered.
func WithGuidance(g assembly.Guidance) RunOption {
	return func(c *runConfig) { c.open = append(c.open, skillkit.WithGuidance(g)) }
}

// WithRuntimeState puts values in the run's context, where the kit's
// filters, catalog renderers, exec environment providers and callbacks
// read them with RuntimeValue: per-request facts such as the user's ID or
// tenant, which decide the skills a request sees without the model
// seeing them. A later WithRuntimeState adds to and overrides earlier
// ones.
func WithRuntimeState(values map[string]any) RunOption {
	return func(c *runConfig) {
		if c.state == nil {
			c.state = map[string]any{}
		}
		for k, v := range values {
			c.state[k] = v
		}
	}
}

// runtimeStateKey keys the run's runtime state in its context.
type runtimeStateKey struct{}

// RuntimeValue returns the runtime state value key of the run whose
// context ctx is (WithRuntimeState), and whether it is set and of type T.
func RuntimeValue[T any](ctx context.Context, key string) (T, bool) {
	m, _ := ctx.Value(runtimeStateKey{}).(map[string]any)
	v, ok := m[key].(T)
	return v, ok
}

// WithSkillLoads declares skills (and documents) to load for this turn
// before the first model request. The declarations of every
// WithSkillLoads of a run form one batch, validated as a whole against the
// skills of the request and the agent's cap before anything is recorded:
// a bad batch ends the run with an error wrapping ErrInvalidLoadRequest or
// ErrSkillUnavailable, the model is never asked, and the session is left
// unchanged (a session the run had to create stays empty). A valid batch
// is recorded with the user message, in the same atomic append, as one
// event after it (conversation.UserDeclare).
func WithSkillLoads(decls ...loadstate.Declaration) RunOption {
	return func(c *runConfig) { c.loads = append(c.loads, decls...) }
}

// Kind says what an Event reports.
type Kind int

// The kinds of events a run yields, in the order they come.
const (
	// KindUser: the user message was recorded (Record), which starts
	// the agent's turn. A skill it invokes directly (/name) is recorded
	// after it, in the session only.
	KindUser Kind = iota + 1
	// KindDeclared: the declared loads were recorded (Record, Loads).
	KindDeclared
	// KindText: a piece of the answer's text arrived (Text), with
	// Options.Stream only. The answer is recorded, and reported as
	// KindResponse, once it is whole.
	KindText
	// KindResponse: the model answered and the answer was recorded
	// (Response, Record: the assistant event, Usage of this step). Its
	// calls have run; a KindToolResult for each follows.
	KindResponse
	// KindToolResult: one call of the last answer and its result, as
	// recorded (Call, Result, Loads, Record: the tool event).
	KindToolResult
	// KindAnswer: the model answered without calling a tool; the run is
	// over (Text, Usage of the whole run, Step: the steps it took).
	KindAnswer
	// KindCompaction: the history was summarised before a model request
	// to fit Options.Compaction's budget (Text: the summary, Usage: the
	// summarising request's, Record: the summary event, Tokens: the
	// request's tokens before and after).
	KindCompaction
	// KindTransfer: the agent handed the turn to a sub-agent (Text: its
	// name); the sub-agent's events follow, with their Agent.
	KindTransfer
)

// String returns the kind's name, such as "response".
func (k Kind) String() string {
	switch k {
	case KindUser:
		return "user"
	case KindDeclared:
		return "declared"
	case KindText:
		return "text"
	case KindResponse:
		return "response"
	case KindToolResult:
		return "tool_result"
	case KindAnswer:
		return "answer"
	case KindCompaction:
		return "compaction"
	case KindTransfer:
		return "transfer"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Event is one thing that happened in a run. Fields that do not apply to
// the Kind are zero.
type Event struct {
	// Kind says what happened.
	Kind Kind
	// Agent is the agent whose event it is: the agent run, or the
	// sub-agent it transferred to.
	Agent string
	// SessionID is the session the run records to (the one Run created
	// when it was given "").
	SessionID string
	// Step is the model step the event belongs to, 1 for the first
	// request; 0 for KindUser and KindDeclared. On KindAnswer it is the
	// number of steps the run took.
	Step int
	// Text is the user message (KindUser), a piece of streamed text
	// (KindText) or the final answer (KindAnswer).
	Text string
	// Response is the model's answer (KindResponse).
	Response *model.Response
	// Request is the request the model answered (KindResponse), as sent
	// after Options.BeforeModel.
	Request *model.Request
	// Tokens are a compacted request's o200k_base token counts before and
	// after the compaction (KindCompaction).
	Tokens [2]int
	// Call is the tool call as recorded, with the provider's ID or the
	// one given when it had none (KindToolResult).
	Call session.ToolCall
	// Result is the call's result, with the structured content and
	// attachments the session does not keep (KindToolResult).
	Result tools.Result
	// Loads are what the event brought into the conversation: the skills
	// and documents a tool result or the declaration loaded
	// (KindToolResult, KindDeclared).
	Loads []session.Load
	// Usage is the token accounting of this step (KindResponse) or the
	// sum over the run's steps (KindAnswer).
	Usage model.Usage
	// Record is the session event as stored: the user message, the
	// declaration, the assistant answer or the tool result.
	Record session.Event
}

// Run runs one turn of the agent in the session sessionID ("" starts a
// new session, named by every event's SessionID; a missing one is
// created): it records message as the user's, then asks the model and
// runs and records its tool calls until it answers without calling one.
// The sequence yields each Event as it happens; a failure is its last
// value, with a zero Event: a model, store or tool host failure, ctx's
// end (wrapping ctx.Err()), or ErrMaxSteps. Stopping the range early ends
// the run after the last step recorded, and an answer that arrived after
// ctx ended is not recorded. Each range over the sequence runs the turn
// anew.
func (a *Agent) Run(ctx context.Context, sessionID, message string, opts ...RunOption) iter.Seq2[Event, error] {
	var rc runConfig
	for _, o := range opts {
		o(&rc)
	}
	return func(yield func(Event, error) bool) {
		ctx, span := a.startRun(withChain(ctx, a.name))
		err := a.run(ctx, sessionID, message, rc, yield)
		if errors.Is(err, errStopped) {
			span.SetAttributes(attrStopped.Bool(true))
			err = nil
		}
		tracing.End(span, err)
		if err != nil {
			yield(Event{}, err)
		}
	}
}

// errStopped reports that the caller stopped ranging; it is never
// yielded.
var errStopped = errors.New("agent: the caller stopped")

func (a *Agent) run(ctx context.Context, sessionID, message string, rc runConfig, yield func(Event, error) bool) error {
	if rc.state != nil {
		state := map[string]any{}
		if outer, ok := ctx.Value(runtimeStateKey{}).(map[string]any); ok {
			maps.Copy(state, outer)
		}
		maps.Copy(state, rc.state)
		ctx = context.WithValue(ctx, runtimeStateKey{}, state)
	}
	var id string
	var cur atomic.Int64 // the step whose calls run
	open := []skillkit.OpenOption{skillkit.WithWrapCall(a.wrapCall(&id, &cur))}
	if extra := a.runnerTools(); len(extra) > 0 {
		open = append(open, skillkit.WithTools(extra...))
	}
	conv, err := a.kit.Open(ctx, sessionID, a.name, append(open, rc.open...)...)
	if err != nil {
		return fmt.Errorf("agent %q: %w", a.name, err)
	}
	id = conv.ID()
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attrConversationID.String(id))
	emit := func(ev Event) error {
		ev.SessionID, ev.Agent = id, a.name
		if !yield(ev, nil) {
			return errStopped
		}
		return nil
	}
	if len(rc.loads) > 0 {
		if err := a.checkLoading(ctx, conv); err != nil {
			return err
		}
	}
	// The declared loads are checked before anything is recorded, then
	// recorded with the message that starts the turn, in one append.
	user, declared, err := conv.UserDeclare(ctx, message, rc.loads)
	switch {
	case errors.Is(err, ErrInvalidLoadRequest) || errors.Is(err, ErrSkillUnavailable):
		return fmt.Errorf("agent %q: declared loads: %w", a.name, err)
	case err != nil:
		return fmt.Errorf("agent %q: the user message: %w", a.name, err)
	}
	if err := emit(Event{Kind: KindUser, Text: message, Record: user}); err != nil {
		return err
	}
	if len(rc.loads) > 0 {
		if err := emit(Event{Kind: KindDeclared, Loads: declared.Loads, Record: declared}); err != nil {
			return err
		}
	}
	var total model.Usage
	fenced := 0 // answers whose code ran
	for step := 1; step <= a.opts.MaxSteps; step++ {
		span.SetAttributes(attrSteps.Int(step))
		cur.Store(int64(step))
		resp, req, spent, err := a.step(ctx, conv, step, rc, emit)
		total = total.Add(spent) // a compaction's summarising request
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("agent %q: step %d: the answer arrived after the run was cancelled and was not recorded: %w", a.name, step, err)
		}
		answer := resp.Assistant()
		// The runtime runs the answer's code for the model, recorded as
		// the calls that did it; never the code of an answer cut at the
		// token limit, whose last command may be cut too.
		if fc := a.opts.FencedCode; fc != nil && len(answer.Calls) == 0 && fenced < fc.MaxRounds && resp.FinishReason != model.FinishLength {
			if answer.Calls = fencedCalls(answer.Text, a.execName); len(answer.Calls) > 0 {
				fenced++
			}
		}
		rec, err := conv.Respond(ctx, answer)
		if err != nil {
			return fmt.Errorf("agent %q: step %d: recording the answer: %w", a.name, step, err)
		}
		total = total.Add(resp.Usage)
		setUsage(span, total)
		if err := emit(Event{Kind: KindResponse, Step: step, Response: resp, Request: req, Usage: resp.Usage, Record: rec.Events[0]}); err != nil {
			return err
		}
		for i, call := range rec.Events[0].ToolCalls {
			res := rec.Events[1+i]
			if err := emit(Event{Kind: KindToolResult, Step: step, Call: call, Result: rec.Results[i], Loads: res.Loads, Record: res}); err != nil {
				return err
			}
		}
		if to := a.transferred(rec); to != nil {
			if err := emit(Event{Kind: KindTransfer, Step: step, Text: to.name}); err != nil {
				return err
			}
			return a.handOff(ctx, to, id, message, rc, total, yield)
		}
		if len(answer.Calls) == 0 {
			return emit(Event{Kind: KindAnswer, Step: step, Text: rec.Events[0].Text, Usage: total})
		}
	}
	return fmt.Errorf("%w: agent %q stopped after %d steps", ErrMaxSteps, a.name, a.opts.MaxSteps)
}

// checkLoading reports ErrSkillLoadingUnsupported when the agent offers
// none of the tools that load a skill's instructions.
func (a *Agent) checkLoading(ctx context.Context, conv *conversation.Conversation) error {
	ts, err := conv.Tools(ctx)
	if err != nil {
		return fmt.Errorf("agent %q: %w", a.name, err)
	}
	for _, t := range ts {
		switch t.Builtin() {
		case tools.SkillName, tools.LoadName, tools.SelectDocsName:
			return nil
		}
	}
	return fmt.Errorf("%w: agent %q offers none of %s, %s, %s; declare loads only for an agent with skill tools", ErrSkillLoadingUnsupported, a.name, tools.SkillName, tools.LoadName, tools.SelectDocsName)
}

// runnerTools are the tools the runner adds to the kit's for this agent:
// Options.Tools and, with sub-agents, the transfer tool.
func (a *Agent) runnerTools() []tools.Tool {
	ts := slices.Clone(a.opts.Tools)
	if len(a.opts.SubAgents) > 0 {
		ts = append(ts, transferTool(a.opts.SubAgents))
	}
	return ts
}

// transferred returns the sub-agent an answer's successful transfer call
// chose, or nil.
func (a *Agent) transferred(rec *conversation.Step) *Agent {
	for i, call := range rec.Events[0].ToolCalls {
		if call.Name != TransferName || rec.Results[i].IsError {
			continue
		}
		for _, sub := range a.opts.SubAgents {
			if rec.Results[i].Text == transferText(sub.name) {
				return sub
			}
		}
	}
	return nil
}

// handOff runs the sub-agent's turn on the user's message in the same
// session and yields its events as the run's.
//
// The sub-agent gets the run's options but its declared loads, which were
// the caller's; its answer carries the usage of the whole run, the
// caller's steps included.
func (a *Agent) handOff(ctx context.Context, to *Agent, id, message string, rc runConfig, used model.Usage, yield func(Event, error) bool) error {
	sub := rc
	sub.loads = nil
	for ev, err := range to.Run(ctx, id, message, func(c *runConfig) { *c = sub }) {
		if err != nil {
			return fmt.Errorf("agent %q: transfer to %q: %w", a.name, to.name, err)
		}
		if ev.Kind == KindAnswer {
			ev.Usage = ev.Usage.Add(used)
		}
		if !yield(ev, nil) {
			return errStopped
		}
	}
	return nil
}

// wrapCall returns the conversation's wrapper around each tool call: its
// span and the tool callbacks. id and step are read when a call runs.
func (a *Agent) wrapCall(id *string, step *atomic.Int64) func(context.Context, session.ToolCall, func(context.Context) (tools.Result, error)) (tools.Result, error) {
	return func(ctx context.Context, call session.ToolCall, run func(context.Context) (tools.Result, error)) (tools.Result, error) {
		tc := ToolCall{Agent: a.name, SessionID: *id, Step: int(step.Load()), Call: call}
		ctx, span := a.startTool(ctx, tc)
		res, err := a.callTool(ctx, tc, run)
		a.endTool(span, res, err)
		return res, err
	}
}

// callTool runs one call between the tool callbacks.
func (a *Agent) callTool(ctx context.Context, tc ToolCall, run func(context.Context) (tools.Result, error)) (tools.Result, error) {
	if a.opts.BeforeTool != nil {
		if err := a.opts.BeforeTool(ctx, tc); err != nil {
			return tools.Result{}, fmt.Errorf("Options.BeforeTool: %w", err)
		}
	}
	res, err := run(ctx)
	if a.opts.AfterTool != nil {
		if aerr := a.opts.AfterTool(ctx, tc, &res, err); aerr != nil {
			return tools.Result{}, fmt.Errorf("Options.AfterTool: %w", aerr)
		}
	}
	return res, err
}

// step builds the next request (compacting the history first when it is
// over the budget) and asks the model, between the model callbacks. It
// returns the answer and the request it answered.
//
// spent is the usage of a compaction's summarising request, which the
// run's usage counts.
func (a *Agent) step(ctx context.Context, conv *conversation.Conversation, step int, rc runConfig, emit func(Event) error) (resp *model.Response, _ *model.Request, spent model.Usage, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, spent, fmt.Errorf("agent %q: step %d: %w", a.name, step, err)
	}
	// The catalog needs no publishing here: User publishes it when the
	// turn starts, and Respond appends a replacement after any answer
	// during which the skill set changed.
	req, err := conv.Request(ctx)
	if err != nil {
		return nil, nil, spent, fmt.Errorf("agent %q: step %d: building the request: %w", a.name, step, err)
	}
	req, done, err := a.compact.maybeCompact(ctx, conv, req)
	if err != nil {
		return nil, nil, spent, fmt.Errorf("agent %q: step %d: %w", a.name, step, err)
	}
	if done != nil {
		spent = done.usage
		if err := emit(Event{Kind: KindCompaction, Step: step, Text: done.summary, Usage: done.usage,
			Tokens: [2]int{done.before, done.after}, Record: done.event}); err != nil {
			return nil, nil, spent, err
		}
	}
	mreq := &model.Request{Messages: req.Messages, Tools: req.Tools, Output: a.opts.Output,
		CacheKey: a.opts.CacheKey, Temperature: a.opts.Temperature, MaxTokens: a.opts.MaxTokens}
	if rc.cacheKey != nil {
		mreq.CacheKey = *rc.cacheKey
	}
	call := ModelCall{Agent: a.name, SessionID: conv.ID(), Step: step, Request: mreq, store: a.kit.Store()}
	if a.opts.BeforeModel != nil {
		if err := a.opts.BeforeModel(ctx, call); err != nil {
			return nil, nil, spent, fmt.Errorf("agent %q: step %d: Options.BeforeModel: %w", a.name, step, err)
		}
	}
	resp, err = a.ask(ctx, call, emit)
	if errors.Is(err, errStopped) || a.opts.AfterModel == nil {
		return resp, call.Request, spent, err
	}
	if aerr := a.opts.AfterModel(ctx, call, resp, err); aerr != nil {
		return nil, nil, spent, fmt.Errorf("agent %q: step %d: Options.AfterModel: %w", a.name, step, aerr)
	}
	return resp, call.Request, spent, err
}

// ask sends the request to the model in its span, streaming the text
// when Options.Stream is set.
func (a *Agent) ask(ctx context.Context, call ModelCall, emit func(Event) error) (resp *model.Response, err error) {
	ctx, span := a.startChat(ctx, call)
	defer func() { a.endChat(span, resp, err) }()
	step, mreq := call.Step, call.Request
	if !a.opts.Stream {
		resp, err = a.model.Generate(ctx, mreq)
		if err != nil {
			return nil, fmt.Errorf("agent %q: step %d: the model: %w", a.name, step, err)
		}
		return resp, nil
	}
	for c, err := range a.model.Stream(ctx, mreq) {
		if err != nil {
			return nil, fmt.Errorf("agent %q: step %d: the model: %w", a.name, step, err)
		}
		if c.Text != "" {
			if err := emit(Event{Kind: KindText, Step: step, Text: c.Text}); err != nil {
				return nil, err
			}
		}
		if c.Response != nil {
			resp = c.Response
		}
	}
	if resp == nil {
		return nil, fmt.Errorf("agent %q: step %d: the model's stream ended without a response", a.name, step)
	}
	return resp, nil
}
