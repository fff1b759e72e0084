package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/tiktoken-go/tokenizer"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// defaultBenchRoot is the skill root `bench cache` replays against when
// no ROOT is given, relative to the working directory.
const defaultBenchRoot = "examples/skills"

// defaultBenchMaxLoaded is the loaded-skills cap of the replayed sessions:
// small enough that the scripts evict.
const defaultBenchMaxLoaded = 2

// benchSystem is the system prompt of every replayed session.
const benchSystem = "You are a careful assistant. Use the available skills when they apply."

// cacheRow is the prompt-cache figures of one placement × lifetime over
// every episode.
type cacheRow struct {
	Placement assembly.Placement `json:"placement"`
	Mode      loadstate.Lifetime `json:"mode"`
	// Requests is the number of model requests replayed.
	Requests int `json:"requests"`
	// PromptTokens is the tokens of every request, summed.
	PromptTokens int `json:"prompt_tokens"`
	// ReusedTokens is, summed over requests, the longest common token
	// prefix with the previous request of the same episode.
	ReusedTokens int `json:"reused_tokens"`
	// ReusePct is ReusedTokens / PromptTokens in percent.
	ReusePct float64 `json:"reuse_pct"`
	// UncachedTokens is PromptTokens - ReusedTokens.
	UncachedTokens int `json:"uncached_tokens"`
	// TurnPairs is the number of consecutive request pairs within a turn.
	TurnPairs int `json:"within_turn_pairs"`
	// WithinTurnReusePct is, over the within-turn pairs, the share of the
	// earlier request that the later one reuses as its prefix: 100 means
	// every request of a turn is a token-exact prefix of the next.
	WithinTurnReusePct float64 `json:"within_turn_reuse_pct"`
	// ToolErrors counts scripted calls whose result was a tool error (a
	// skill the lifetime had already unloaded, for example).
	ToolErrors int `json:"tool_errors"`
	// Runner is, with --runner, the same episodes driven through the
	// agent runner over HTTP, as the server counted them.
	Runner *runnerFigures `json:"runner,omitempty"`
}

// cacheReport is the output of `skillkit bench cache`.
type cacheReport struct {
	Encoding  string   `json:"encoding"`
	MaxLoaded int      `json:"max_loaded"`
	Roots     []string `json:"roots"`
	Episodes  []string `json:"episodes"`
	// Runner reports that each row has the runner's figures too.
	Runner bool       `json:"runner,omitempty"`
	Rows   []cacheRow `json:"rows"`
}

// cacheStep is one scripted action: a user message (Tool empty) or a
// model tool call. A model request follows every step.
type cacheStep struct {
	User string
	Tool string
	Args string
}

// cacheEpisode is one scripted conversation.
type cacheEpisode struct {
	Name  string
	Steps []cacheStep
}

func newBench(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure skillkit's behaviour on scripted workloads",
	}
	cmd.AddCommand(newBenchCache(env))
	return cmd
}

func newBenchCache(env *Env) *cobra.Command {
	var asJSON, runner bool
	var maxLoaded int
	cmd := &cobra.Command{
		Use:   "cache [--json] [--max-loaded N] [--runner] [ROOT...]",
		Short: "Replay scripted episodes for every placement and lifetime and report prompt-cache reuse",
		Long: "cache replays fixed multi-turn episodes (loads, document selections, LRU evictions, turn\n" +
			"boundaries) against the skills of ROOT (default ./" + defaultBenchRoot + ") for every placement\n" +
			"(tool-result, system) and lifetime (once, turn, session), and tokenizes every request\n" +
			"(" + catalog.DefaultEncoding + "). A request is its tool list followed by its messages, each\n" +
			"JSON-encoded and tokenized on its own, as chat templates separate messages. REUSED is\n" +
			"the longest common token prefix with the previous request, what a provider's prompt\n" +
			"cache can serve. IN-TURN % is, over consecutive requests of the same turn, the share of\n" +
			"the earlier request reused by the later one (100: each is a prefix of the next).\n\n" +
			"--runner also drives each episode through the agent runner — agent.Run with the\n" +
			"OpenAI-compatible adapter, over HTTP, against a scripted Chat Completions server on\n" +
			"127.0.0.1 that answers with the episode's tool calls one at a time and ends each turn\n" +
			"with a short answer — and reports the server's usage beside the replay's: RUNNER PROMPT and\n" +
			"CACHED (its prompt tokens and cached tokens summed; the prompt is the tools, then the\n" +
			"messages, as the body holds them, in the same encoding; cached is the common prefix with\n" +
			"the previous request), REUSE %, IN-TURN % (cached tokens of each request as a share of\n" +
			"the previous request's prompt, within a turn) and BROKEN (within-turn pairs whose later\n" +
			"body does not repeat the earlier one's tools and messages byte for byte). --json adds\n" +
			"each request's figures (runner.per_request).",
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxLoaded < 0 {
				return fmt.Errorf("--max-loaded is %d; use 0 for no cap or a positive count", maxLoaded)
			}
			roots := args
			if len(roots) == 0 {
				cwd, err := env.workDir()
				if err != nil {
					return err
				}
				def := filepath.Join(cwd, defaultBenchRoot)
				if _, err := os.Stat(def); err != nil {
					return fmt.Errorf("no ROOT given and the default %s is missing (%w); pass a skill root", def, err)
				}
				roots = []string{def}
			}
			rep, err := cacheBench(cmd.Context(), env, roots, maxLoaded, runner)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(env.Stdout, rep)
			}
			return rep.write(env)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&maxLoaded, "max-loaded", defaultBenchMaxLoaded, "cap on loaded skills in the replayed sessions (0: no cap)")
	cmd.Flags().BoolVar(&runner, "runner", false, "also drive the episodes through the agent runner over HTTP and report the server's cached tokens")
	return cmd
}

func (rep *cacheReport) write(env *Env) error {
	fmt.Fprintf(env.Stdout, "prompt-cache reuse: episodes %s; %s tokens; max loaded %d\n\n",
		strings.Join(rep.Episodes, ", "), rep.Encoding, rep.MaxLoaded)
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	header := "PLACEMENT\tMODE\tREQUESTS\tPROMPT\tREUSED\tREUSE %\tUNCACHED\tIN-TURN %\tTOOL ERRORS\t"
	if rep.Runner {
		header += "RUNNER PROMPT\tCACHED\tREUSE %\tIN-TURN %\tBROKEN\t"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rep.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f\t%d\t%.1f\t%d\t", r.Placement, r.Mode, r.Requests,
			r.PromptTokens, r.ReusedTokens, r.ReusePct, r.UncachedTokens, r.WithinTurnReusePct, r.ToolErrors)
		if f := r.Runner; f != nil {
			fmt.Fprintf(tw, "%d\t%d\t%.1f\t%.1f\t%d\t", f.PromptTokens, f.CachedTokens, f.ReusePct, f.WithinTurnReusePct, f.PrefixBroken)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// cacheBench replays every episode for every placement × lifetime, and
// with runner drives them through the agent runner as well.
func cacheBench(ctx context.Context, env *Env, roots []string, maxLoaded int, runner bool) (*cacheReport, error) {
	abs := make([]string, len(roots))
	for i, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("argument ROOT %s: %w", r, err)
		}
		abs[i] = a
	}
	reg, err := openRegistry(ctx, env, abs)
	if err != nil {
		return nil, err
	}
	snap := reg.Snapshot()
	episodes, err := cacheEpisodes(ctx, snap)
	if err != nil {
		return nil, err
	}
	tok, err := newSegmentTokenizer(catalog.DefaultEncoding)
	if err != nil {
		return nil, err
	}
	rep := &cacheReport{Encoding: catalog.DefaultEncoding, MaxLoaded: maxLoaded, Roots: abs, Runner: runner}
	for _, e := range episodes {
		rep.Episodes = append(rep.Episodes, e.Name)
	}
	for _, p := range []assembly.Placement{assembly.PlacementToolResult, assembly.PlacementSystem} {
		for _, m := range []loadstate.Lifetime{loadstate.Once, loadstate.Turn, loadstate.Session} {
			row := cacheRow{Placement: p, Mode: m}
			var turnTokens, turnReused int
			for _, e := range episodes {
				opts := conversation.Options{Lifetime: m, Placement: p, MaxLoaded: maxLoaded, System: benchSystem,
					Skills: func(context.Context) *registry.Snapshot { return snap }}
				if err := replay(ctx, opts, e, tok, &row, &turnTokens, &turnReused); err != nil {
					return nil, fmt.Errorf("episode %s, placement %s, mode %s: %w", e.Name, p, m, err)
				}
			}
			row.UncachedTokens = row.PromptTokens - row.ReusedTokens
			row.ReusePct = percent(row.ReusedTokens, row.PromptTokens)
			row.WithinTurnReusePct = percent(turnReused, turnTokens)
			if runner {
				if err := runnerBench(ctx, env, abs, episodes, tok, p, m, maxLoaded, &row); err != nil {
					return nil, fmt.Errorf("placement %s, mode %s: %w", p, m, err)
				}
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	return rep, nil
}

func percent(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// replay runs one episode in a fresh in-memory session and adds its
// figures to row.
func replay(ctx context.Context, opts conversation.Options, e cacheEpisode, tok *segmentTokenizer,
	row *cacheRow, turnTokens, turnReused *int) error {
	store := session.NewMemoryStore(nil)
	defer store.Close()
	s, err := store.Create(ctx, "", nil)
	if err != nil {
		return err
	}
	c, err := conversation.Open(ctx, store, s.ID, "default", &opts)
	if err != nil {
		return err
	}
	if _, err := c.PublishCatalog(ctx); err != nil {
		return err
	}
	var prev []uint
	prevTurn := -1
	for i, st := range e.Steps {
		if st.Tool == "" {
			if _, err := c.User(ctx, st.User); err != nil {
				return err
			}
		} else {
			res, err := c.Call(ctx, st.Tool, json.RawMessage(st.Args))
			if err != nil {
				return fmt.Errorf("step %d (%s %s): %w", i+1, st.Tool, st.Args, err)
			}
			if res.IsError {
				row.ToolErrors++
			}
		}
		req, err := c.Request(ctx)
		if err != nil {
			return err
		}
		toks, err := tok.request(req)
		if err != nil {
			return err
		}
		cur, err := store.Get(ctx, s.ID)
		if err != nil {
			return err
		}
		turn := cur.Turn()
		reused := commonPrefix(prev, toks)
		row.Requests++
		row.PromptTokens += len(toks)
		row.ReusedTokens += reused
		if prev != nil && turn == prevTurn {
			row.TurnPairs++
			*turnTokens += len(prev)
			*turnReused += reused
		}
		prev, prevTurn = toks, turn
	}
	return nil
}

func commonPrefix(a, b []uint) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// segmentTokenizer tokenizes a request as its tool list followed by its
// messages, each JSON-encoded and tokenized separately (a message's tokens
// never depend on its neighbours, as with a chat template's separators).
// Segments are cached by text: the replays repeat them constantly.
type segmentTokenizer struct {
	codec tokenizer.Codec
	cache map[string][]uint
}

func newSegmentTokenizer(encoding string) (*segmentTokenizer, error) {
	// catalog.NewCounter validates the name with the message users know;
	// the prefix comparison needs the token IDs, which Counter does not
	// expose, so the codec is fetched here as well.
	if _, err := catalog.NewCounter(encoding); err != nil {
		return nil, err
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(encoding))
	if err != nil {
		return nil, fmt.Errorf("token encoding %s: %w", encoding, err)
	}
	return &segmentTokenizer{codec: codec, cache: map[string][]uint{}}, nil
}

func (t *segmentTokenizer) request(req *assembly.Request) ([]uint, error) {
	var out []uint
	add := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		ids, ok := t.cache[string(b)]
		if !ok {
			if ids, _, err = t.codec.Encode(string(b)); err != nil {
				return fmt.Errorf("tokenizing a request: %w", err)
			}
			t.cache[string(b)] = ids
		}
		out = append(out, ids...)
		return nil
	}
	if err := add(req.Tools); err != nil {
		return nil, err
	}
	for _, m := range req.Messages {
		if err := add(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cacheEpisodes builds the fixed scripts over the model-invocable skills
// of snap (in name order). The skill with the most documents (ties: the
// first by name) is the document skill; the others are loaded around it
// so that a cap of two evicts.
func cacheEpisodes(ctx context.Context, snap *registry.Snapshot) ([]cacheEpisode, error) {
	var names []string
	for _, s := range snap.Summaries() {
		if s.ModelInvocable {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	if len(names) < 2 {
		return nil, fmt.Errorf("the skill roots hold %d model-invocable skills; the cache episodes need at least 2", len(names))
	}
	docSkill, docs := names[0], []string(nil)
	for _, n := range names {
		d, err := snap.Docs(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("skill %s: %w", n, err)
		}
		if len(d) > len(docs) {
			docSkill, docs = n, d
		}
	}
	var others []string
	for _, n := range names {
		if n != docSkill {
			others = append(others, n)
		}
	}
	other := func(i int) string { return others[i%len(others)] }
	doc := func(i int) string {
		if len(docs) == 0 {
			return ""
		}
		return docs[i%len(docs)]
	}
	user := func(text string) cacheStep { return cacheStep{User: text} }
	call := func(tool string, args any) cacheStep {
		b, _ := json.Marshal(args) // maps of strings, slices and bools always marshal
		return cacheStep{Tool: tool, Args: string(b)}
	}
	selectDocs := func(mode string, d ...string) []cacheStep {
		if len(docs) == 0 {
			return nil
		}
		return []cacheStep{call(tools.SelectDocsName, map[string]any{"skill": docSkill, "docs": d, "mode": mode})}
	}
	steps := func(parts ...any) []cacheStep {
		var out []cacheStep
		for _, p := range parts {
			switch v := p.(type) {
			case cacheStep:
				out = append(out, v)
			case []cacheStep:
				out = append(out, v...)
			}
		}
		return out
	}
	research := cacheEpisode{Name: "research", Steps: steps(
		user("Review the design I pasted against our guidelines."),
		call(tools.LoadName, map[string]any{"skill": docSkill}),
		call(tools.ListDocsName, map[string]any{"skill": docSkill}),
		selectDocs("add", doc(0)),
		selectDocs("add", doc(1)),
		user("Now look at the next part."),
		call(tools.LoadName, map[string]any{"skill": docSkill}),
		selectDocs("replace", doc(2)),
		call(tools.ReadName, map[string]any{"skill": docSkill, "path": "SKILL.md"}),
		user("Thanks. Summarise what we changed."),
	)}
	churn := cacheEpisode{Name: "lru-churn", Steps: steps(
		user("Prepare the report."),
		call(tools.LoadName, map[string]any{"skill": docSkill}),
		call(tools.LoadName, map[string]any{"skill": other(0)}),
		selectDocs("add", doc(0)), // a touch: other(0) becomes the oldest
		call(tools.LoadName, map[string]any{"skill": other(1)}),
		call(tools.SkillName, map[string]any{"name": other(0)}),
		user("Add the numbers."),
		call(tools.LoadName, map[string]any{"skill": other(1)}),
		call(tools.LoadName, map[string]any{"skill": docSkill, "include_all_docs": true}),
		call(tools.LoadName, map[string]any{"skill": other(0)}),
		user("One more pass."),
		selectDocs("clear"),
		call(tools.LoadName, map[string]any{"skill": other(1)}),
	)}
	return []cacheEpisode{research, churn}, nil
}
