package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model/openai"
	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
)

// `bench cache --runner`: the episodes driven through the agent runner
// (agent.Run, the openai adapter, real HTTP) against an openaitest
// server on 127.0.0.1 whose script answers with the episode's tool calls,
// its usage computed over the prompt a chat template renders
// (openaitest.TemplatePrompt) and counted in the same encoding.

// benchModel is the model name the runner asks the bench's server for.
const benchModel = "bench"

// benchAnswer is the scripted answer that ends each turn of an episode.
const benchAnswer = "Done."

// runnerFigures is the runner's side of a cacheRow: what the server
// reported for the requests the runner made.
type runnerFigures struct {
	// Requests is the number of requests the server answered.
	Requests int `json:"requests"`
	// PromptTokens and CachedTokens are the server's usage, summed.
	PromptTokens int `json:"prompt_tokens"`
	CachedTokens int `json:"cached_tokens"`
	// ReusePct is CachedTokens / PromptTokens in percent.
	ReusePct float64 `json:"reuse_pct"`
	// TurnPairs is the number of consecutive request pairs within a turn.
	TurnPairs int `json:"within_turn_pairs"`
	// WithinTurnReusePct is, over the within-turn pairs, the later
	// request's cached tokens as a share of the earlier one's prompt: 100
	// means the server served every request of a turn but its new part
	// from the cache.
	WithinTurnReusePct float64 `json:"within_turn_reuse_pct"`
	// PrefixBroken counts the within-turn pairs whose later body does not
	// extend the earlier one (bodyExtends): other tools, or an earlier
	// message changed.
	PrefixBroken int `json:"within_turn_prefix_broken"`
	// ToolErrors counts the calls whose result was a tool error.
	ToolErrors int `json:"tool_errors"`
	// PerRequest is each request's usage as the server reported it, in
	// order.
	PerRequest []runnerRequest `json:"per_request"`

	turnPrompt, turnCached int
}

// runnerRequest is one request of the runner and its usage.
type runnerRequest struct {
	Episode string `json:"episode"`
	// Turn is the episode's turn, 1 for the first.
	Turn         int `json:"turn"`
	PromptTokens int `json:"prompt_tokens"`
	CachedTokens int `json:"cached_tokens"`
}

// runnerTrace is what one episode sent through the runner: the server's
// exchanges, the turn of each (1 for the first), the tool errors.
type runnerTrace struct {
	exchanges  []openaitest.Exchange
	turns      []int
	toolErrors int
}

// tokenCount counts tokens of one encoding for a server that may count
// concurrently, keeping the first failure.
type tokenCount struct {
	codec tokenizer.Codec
	mu    sync.Mutex
	err   error
}

func (c *tokenCount) count(b []byte) int {
	n, err := c.codec.Count(string(b))
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return n
}

// failure is the first counting error, or nil.
func (c *tokenCount) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// runnerBench drives every episode through the runner for placement p
// and lifetime m and adds the server's figures to row.
func runnerBench(ctx context.Context, env *Env, roots []string, episodes []cacheEpisode, tok *segmentTokenizer,
	p assembly.Placement, m loadstate.Lifetime, maxLoaded int, row *cacheRow) error {
	opts, err := env.registryOptions()
	if err != nil {
		return err
	}
	kit, err := skillkit.New(ctx, &skillkit.Options{Roots: roots, Registry: opts, Store: session.NewMemoryStore(nil),
		Agent: skillkit.AgentOptions{System: benchSystem, Lifetime: m, Placement: p, MaxLoaded: maxLoaded}})
	if err != nil {
		return err
	}
	defer kit.Close()
	counter := &tokenCount{codec: tok.codec}
	fig := &runnerFigures{}
	for _, e := range episodes {
		tr, err := runnerEpisode(ctx, kit, e, counter.count)
		if err != nil {
			return fmt.Errorf("episode %s through the runner: %w", e.Name, err)
		}
		if err := counter.failure(); err != nil {
			return fmt.Errorf("episode %s: counting tokens: %w", e.Name, err)
		}
		if err := fig.add(e.Name, tr); err != nil {
			return fmt.Errorf("episode %s: %w", e.Name, err)
		}
	}
	fig.ReusePct = percent(fig.CachedTokens, fig.PromptTokens)
	fig.WithinTurnReusePct = percent(fig.turnCached, fig.turnPrompt)
	row.Runner = fig
	return nil
}

// runnerScript is the server's script for an episode, and the most
// requests a turn of it makes: each tool call of a turn as an answer with
// that one call (expecting the previous call's result), then benchAnswer,
// which ends the turn.
func runnerScript(e cacheEpisode) (*scripted.Script, int, error) {
	if len(e.Steps) == 0 || e.Steps[0].Tool != "" {
		return nil, 0, fmt.Errorf("episode %s does not start with a user message, which the runner's turns start with", e.Name)
	}
	s := &scripted.Script{}
	longest, calls, prev := 0, 0, ""
	end := func() {
		s.Steps = append(s.Steps, scripted.Step{Expect: expectResult(prev), Text: benchAnswer})
		longest, calls, prev = max(longest, calls+1), 0, ""
	}
	for i, st := range e.Steps {
		if st.Tool == "" {
			if i > 0 {
				end()
			}
			continue
		}
		id := fmt.Sprintf("call_%d", i+1)
		s.Steps = append(s.Steps, scripted.Step{Expect: expectResult(prev), Calls: []scripted.Call{{ID: id, Name: st.Tool, Arguments: scripted.Arguments(st.Args)}}})
		calls, prev = calls+1, id
	}
	end()
	return s, longest, nil
}

// expectResult expects the result of call id last, when there is one.
func expectResult(id string) *scripted.Expect {
	if id == "" {
		return nil
	}
	return &scripted.Expect{ToolResults: []string{id}}
}

// runnerEpisode runs episode e in a new session of kit: each user step is
// a turn of agent.Run over the openai adapter, against a server on
// 127.0.0.1 playing runnerScript(e), whose computed usage counts tokens
// with count.
func runnerEpisode(ctx context.Context, kit *skillkit.Kit, e cacheEpisode, count func([]byte) int) (*runnerTrace, error) {
	script, longest, err := runnerScript(e)
	if err != nil {
		return nil, err
	}
	srv, err := openaitest.New(script, &openaitest.Options{Model: benchModel, Tokens: count, Prompt: openaitest.TemplatePrompt})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	m, err := openai.New(&openai.Options{BaseURL: srv.URL, Model: benchModel})
	if err != nil {
		return nil, err
	}
	a, err := agent.New(kit, defaultAgent, m, &agent.Options{MaxSteps: longest, Stream: true})
	if err != nil {
		return nil, err
	}
	tr := &runnerTrace{}
	id, turn := "", 0
	for _, st := range e.Steps {
		if st.Tool != "" {
			continue
		}
		turn++
		for ev, err := range a.Run(ctx, id, st.User) {
			if err != nil {
				return nil, fmt.Errorf("turn %d: %w", turn, err)
			}
			id = ev.SessionID
			if ev.Kind == agent.KindToolResult && ev.Result.IsError {
				tr.toolErrors++
			}
		}
		for len(tr.turns) < len(srv.Exchanges()) {
			tr.turns = append(tr.turns, turn)
		}
	}
	if err := srv.Err(); err != nil {
		return nil, fmt.Errorf("the server refused a request: %w", err)
	}
	if err := srv.Done(); err != nil {
		return nil, err
	}
	tr.exchanges = srv.Exchanges()
	return tr, nil
}

// add counts one episode's trace.
func (f *runnerFigures) add(episode string, tr *runnerTrace) error {
	f.ToolErrors += tr.toolErrors
	for i, ex := range tr.exchanges {
		u := ex.Usage
		f.Requests++
		f.PromptTokens += u.PromptTokens
		f.CachedTokens += u.CachedPromptTokens
		f.PerRequest = append(f.PerRequest, runnerRequest{Episode: episode, Turn: tr.turns[i], PromptTokens: u.PromptTokens, CachedTokens: u.CachedPromptTokens})
		if i == 0 || tr.turns[i] != tr.turns[i-1] {
			continue
		}
		f.TurnPairs++
		f.turnPrompt += tr.exchanges[i-1].Usage.PromptTokens
		f.turnCached += u.CachedPromptTokens
		ok, err := bodyExtends(tr.exchanges[i-1].Body, ex.Body)
		if err != nil {
			return fmt.Errorf("request %d: %w", i+1, err)
		}
		if !ok {
			f.PrefixBroken++
		}
	}
	return nil
}

// bodyExtends reports whether the Chat Completions body next extends
// prev as a prompt cache needs: the same tools, byte for byte, and prev's
// messages, byte for byte, first.
func bodyExtends(prev, next []byte) (bool, error) {
	type body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	var a, b body
	if err := json.Unmarshal(prev, &a); err != nil {
		return false, fmt.Errorf("a request body: %w", err)
	}
	if err := json.Unmarshal(next, &b); err != nil {
		return false, fmt.Errorf("a request body: %w", err)
	}
	if len(a.Tools) != len(b.Tools) || len(a.Messages) > len(b.Messages) {
		return false, nil
	}
	for i := range a.Tools {
		if !bytes.Equal(a.Tools[i], b.Tools[i]) {
			return false, nil
		}
	}
	for i := range a.Messages {
		if !bytes.Equal(a.Messages[i], b.Messages[i]) {
			return false, nil
		}
	}
	return true, nil
}
