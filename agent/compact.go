package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/session"
)

// Compaction keeps an agent's requests within a token budget: before a
// model request that would exceed MaxTokens, the older part of the
// agent's history is summarised by a model into a summary event, which
// later requests send in its place. Skills stay loaded through it; the
// ones the current turn loaded are shown again when their results were
// summarised away (those of earlier turns only with the agent's
// FallbackOnSummary), and the catalog is published anew. A compaction
// that would take out less than the excess, or less than a quarter of the
// budget when the excess is larger, is not made: what is over the budget
// then is what stays (the newest answer's results, the tools), and
// summarising again every step would only cost requests.
type Compaction struct {
	// MaxTokens is the budget of one request — its messages and tools as
	// sent, counted with the o200k_base encoding. It must be positive.
	MaxTokens int
	// KeepTokens is how much of the newest history stays verbatim,
	// counted the same way; 0 means a quarter of MaxTokens. The newest
	// answer and its results always stay.
	KeepTokens int
	// Prompt instructs the summarising model; "" means
	// DefaultCompactionPrompt.
	Prompt string
	// Model writes the summary; nil means the agent's own model.
	Model model.Model
}

// DefaultCompactionPrompt is the system prompt of a summarising request.
const DefaultCompactionPrompt = "You condense a conversation between a user and an AI assistant so the assistant can continue it. " +
	"Write a concise summary that keeps: what the user asked for and still wants, decisions and facts established, " +
	"results of tools that later steps depend on (file names, numbers, errors), which skills were used, and what remains to do. " +
	"Do not copy skill instructions; name the skill instead. Reply with the summary only."

// check validates c and fills its defaults.
func (c *Compaction) check() error {
	switch {
	case c.MaxTokens <= 0:
		return fmt.Errorf("Compaction.MaxTokens is %d; give the request budget in tokens", c.MaxTokens)
	case c.KeepTokens < 0:
		return fmt.Errorf("Compaction.KeepTokens is %d; use 0 for a quarter of MaxTokens or a positive count", c.KeepTokens)
	case c.KeepTokens >= c.MaxTokens:
		return fmt.Errorf("Compaction.KeepTokens %d is not below MaxTokens %d; keep less than the budget", c.KeepTokens, c.MaxTokens)
	}
	if c.KeepTokens == 0 {
		c.KeepTokens = c.MaxTokens / 4
	}
	if c.Prompt == "" {
		c.Prompt = DefaultCompactionPrompt
	}
	return nil
}

// compactor is a checked Compaction with its token counter.
type compactor struct {
	Compaction
	counter *catalog.Counter
}

func newCompactor(c *Compaction, m model.Model) (*compactor, error) {
	if c == nil {
		return nil, nil
	}
	cc := *c
	if err := cc.check(); err != nil {
		return nil, err
	}
	if cc.Model == nil {
		cc.Model = m
	}
	counter, err := catalog.NewCounter(catalog.DefaultEncoding)
	if err != nil {
		return nil, fmt.Errorf("Compaction: the token counter: %w", err)
	}
	return &compactor{Compaction: cc, counter: counter}, nil
}

// tokens counts a request as sent: its messages and tools as JSON.
func (c *compactor) tokens(req *assembly.Request) (int, error) {
	b, err := json.Marshal(struct {
		Messages []assembly.Message  `json:"messages"`
		Tools    []assembly.ToolSpec `json:"tools"`
	}{req.Messages, req.Tools})
	if err != nil {
		return 0, err
	}
	return c.counter.Count(string(b))
}

// compacted is what one compaction did.
type compacted struct {
	before, after int // tokens of the request
	summary       string
	usage         model.Usage
	event         session.Event
}

// maybeCompact compacts the history when req is over the budget and
// returns the request to send (rebuilt after a compaction) and what was
// done (nil when nothing). A history with nothing to summarise is sent as
// it is: the model reports an overlong request better than a guess.
func (c *compactor) maybeCompact(ctx context.Context, conv *conversation.Conversation, req *assembly.Request) (*assembly.Request, *compacted, error) {
	if c == nil {
		return req, nil, nil
	}
	before, err := c.tokens(req)
	if err != nil || before <= c.MaxTokens {
		return req, nil, err
	}
	plan, err := conv.PlanCompaction(ctx, c.KeepTokens, c.counter.Count)
	if err != nil || plan == nil {
		return req, nil, err
	}
	// A summary must take out enough to matter — the excess, or a quarter
	// of the budget when the excess is more than that. Otherwise what is
	// over the budget is what stays (the newest answer's own results, the
	// tools and instructions), and compacting would cost a model request
	// every step for nothing; the request goes as it is.
	if plan.Tokens < min(before-c.MaxTokens, c.MaxTokens/4) {
		return req, nil, nil
	}
	resp, err := c.Model.Generate(ctx, &model.Request{Messages: []assembly.Message{
		{Role: "system", Content: c.Prompt},
		{Role: "user", Content: "Summarise this conversation:\n\n" + plan.Transcript},
	}})
	if err != nil {
		return nil, nil, fmt.Errorf("compaction: the summarising model: %w", err)
	}
	summary := strings.TrimSpace(resp.Text)
	if summary == "" {
		return nil, nil, errors.New("compaction: the summarising model answered with no text")
	}
	ev, err := conv.Compact(ctx, plan.Through, summary)
	if errors.Is(err, conversation.ErrStaleCompaction) {
		// Another run compacted this history meanwhile: its summary
		// stands; build the request on it.
		next, err := conv.Request(ctx)
		return next, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("compaction: %w", err)
	}
	next, err := conv.Request(ctx)
	if err != nil {
		return nil, nil, err
	}
	after, err := c.tokens(next)
	if err != nil {
		return nil, nil, err
	}
	return next, &compacted{before: before, after: after, summary: summary, usage: resp.Usage, event: ev}, nil
}
