package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
)

func benchReport(t *testing.T, args ...string) cacheReport {
	t.Helper()
	out, errOut, code := run(t, append([]string{"bench", "cache", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var rep cacheReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return rep
}

func row(t *testing.T, rep cacheReport, p assembly.Placement, m loadstate.Lifetime) cacheRow {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Placement == p && r.Mode == m {
			return r
		}
	}
	t.Fatalf("no row for %s × %s in %+v", p, m, rep.Rows)
	return cacheRow{}
}

func TestBenchCache(t *testing.T) {
	rep := benchReport(t, examples)
	episodes, err := cacheEpisodes(context.Background(), mustSnapshot(t, examples))
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, e := range episodes {
		steps += len(e.Steps)
	}
	if rep.Encoding != "o200k_base" || rep.MaxLoaded != defaultBenchMaxLoaded || len(rep.Episodes) != len(episodes) {
		t.Errorf("header %q %d %v", rep.Encoding, rep.MaxLoaded, rep.Episodes)
	}
	if len(rep.Rows) != 6 {
		t.Fatalf("%d rows, want 6 (2 placements × 3 lifetimes)", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.Requests != steps {
			t.Errorf("%s × %s: %d requests, want one per step (%d)", r.Placement, r.Mode, r.Requests, steps)
		}
		if r.UncachedTokens != r.PromptTokens-r.ReusedTokens || r.ReusedTokens <= 0 || r.ReusedTokens >= r.PromptTokens {
			t.Errorf("%s × %s: prompt %d, reused %d, uncached %d", r.Placement, r.Mode, r.PromptTokens, r.ReusedTokens, r.UncachedTokens)
		}
		if want := 100 * float64(r.ReusedTokens) / float64(r.PromptTokens); math.Abs(r.ReusePct-want) > 1e-9 {
			t.Errorf("%s × %s: reuse %% %v, want %v", r.Placement, r.Mode, r.ReusePct, want)
		}
		if r.TurnPairs != steps-countUsers(episodes) { // one pair per tool call
			t.Errorf("%s × %s: %d within-turn pairs", r.Placement, r.Mode, r.TurnPairs)
		}
	}
	// The default placement and lifetime: every request of a turn is a
	// token-exact prefix of the next.
	def := row(t, rep, assembly.PlacementToolResult, loadstate.Turn)
	if def.WithinTurnReusePct != 100 {
		t.Errorf("default placement reuses %.2f%% within a turn, want 100", def.WithinTurnReusePct)
	}
	if def.ToolErrors != 0 {
		t.Errorf("the scripts produced %d tool errors in turn mode; they are meant to be valid there", def.ToolErrors)
	}
	// Splicing loaded content into the system message breaks the prefix
	// within a turn, whatever the lifetime.
	for _, m := range []loadstate.Lifetime{loadstate.Once, loadstate.Turn, loadstate.Session} {
		sys, tr := row(t, rep, assembly.PlacementSystem, m), row(t, rep, assembly.PlacementToolResult, m)
		if sys.WithinTurnReusePct >= tr.WithinTurnReusePct || sys.WithinTurnReusePct >= 100 {
			t.Errorf("%s: system placement reuses %.1f%% within a turn, tool-result %.1f%%; want system lower",
				m, sys.WithinTurnReusePct, tr.WithinTurnReusePct)
		}
		if sys.ReusePct >= tr.ReusePct {
			t.Errorf("%s: system placement reuses %.1f%% overall, tool-result %.1f%%; want system lower", m, sys.ReusePct, tr.ReusePct)
		}
	}
	// In session mode an unload within a turn — an LRU eviction, or
	// documents deselected — drops content from an earlier tool result;
	// the cap adds evictions to the scripts' deselections.
	capped := row(t, rep, assembly.PlacementToolResult, loadstate.Session)
	uncapped := row(t, benchReport(t, "--max-loaded", "0", examples), assembly.PlacementToolResult, loadstate.Session)
	if capped.WithinTurnReusePct >= uncapped.WithinTurnReusePct || uncapped.WithinTurnReusePct >= 100 {
		t.Errorf("session mode within-turn reuse: %.1f%% with cap 2, %.1f%% without; want capped < uncapped < 100 (the scripts evict and deselect)",
			capped.WithinTurnReusePct, uncapped.WithinTurnReusePct)
	}
}

func countUsers(eps []cacheEpisode) int {
	n := 0
	for _, e := range eps {
		for _, s := range e.Steps {
			if s.Tool == "" {
				n++
			}
		}
	}
	return n
}

func mustSnapshot(t *testing.T, root string) *registry.Snapshot {
	t.Helper()
	reg, err := registryFor(context.Background(), &Env{Stderr: &strings.Builder{}}, []string{root})
	if err != nil {
		t.Fatal(err)
	}
	return reg.Snapshot()
}

// TestBenchCacheText checks the table against the JSON report. There is
// no golden file: the skill tool's result names the skill's absolute
// folder, so token counts depend on where the repository is checked out.
func TestBenchCacheText(t *testing.T) {
	out, errOut, code := run(t, "bench", "cache", examples)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	again, _, _ := run(t, "bench", "cache", examples)
	if out != again {
		t.Fatalf("two runs differ:\n%s\n%s", out, again)
	}
	rep := benchReport(t, examples)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3+len(rep.Rows) {
		t.Fatalf("%d lines, want a title, a blank line, a header and %d rows:\n%s", len(lines), len(rep.Rows), out)
	}
	if want := "prompt-cache reuse: episodes research, lru-churn; o200k_base tokens; max loaded 2"; lines[0] != want {
		t.Errorf("title %q, want %q", lines[0], want)
	}
	if got := strings.Fields(lines[2]); strings.Join(got, " ") != "PLACEMENT MODE REQUESTS PROMPT REUSED REUSE % UNCACHED IN-TURN % TOOL ERRORS" {
		t.Errorf("header %q", lines[2])
	}
	for i, r := range rep.Rows {
		want := fmt.Sprintf("%s %s %d %d %d %.1f %d %.1f %d", r.Placement, r.Mode, r.Requests, r.PromptTokens,
			r.ReusedTokens, r.ReusePct, r.UncachedTokens, r.WithinTurnReusePct, r.ToolErrors)
		if got := strings.Join(strings.Fields(lines[3+i]), " "); got != want {
			t.Errorf("row %d: %q, want %q", i, got, want)
		}
	}
}

func TestBenchCacheErrors(t *testing.T) {
	one := t.TempDir()
	writeSkill(t, one, "solo", "---\nname: solo\ndescription: Alone.\n---\nBody\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "cache", "--max-loaded", "-1", examples}, "--max-loaded is -1; use 0 for no cap or a positive count"},
		{[]string{"bench", "cache"}, "no ROOT given and the default "},
		{[]string{"bench", "cache", one}, "the skill roots hold 1 model-invocable skills; the cache episodes need at least 2"},
		{[]string{"bench", "cache", filepath.Join(one, "missing")}, "argument ROOT"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, code := run(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

func TestCommonPrefix(t *testing.T) {
	for _, tc := range []struct {
		a, b []uint
		want int
	}{
		{nil, []uint{1, 2}, 0},
		{[]uint{1, 2}, []uint{1, 2, 3}, 2},
		{[]uint{1, 2, 3}, []uint{1, 2}, 2},
		{[]uint{1, 9, 3}, []uint{1, 2, 3}, 1},
		{[]uint{5}, []uint{6}, 0},
		{[]uint{1, 2}, []uint{1, 2}, 2},
	} {
		if got := commonPrefix(tc.a, tc.b); got != tc.want {
			t.Errorf("commonPrefix(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// --runner drives the episodes through agent.Run over HTTP: the server
// answers as many requests as the replay makes, and the two agree on the
// in-turn prefix property — the default keeps every request of a turn a
// prefix of the next (100% on both sides, no broken pair), and wherever
// the replay falls below 100% the bodies the server received break it.
func TestBenchCacheRunner(t *testing.T) {
	rep := benchReport(t, "--runner", examples)
	if !rep.Runner || len(rep.Rows) != 6 {
		t.Fatalf("runner %v, %d rows; want the runner's figures in 6 rows", rep.Runner, len(rep.Rows))
	}
	for _, r := range rep.Rows {
		f := r.Runner
		if f == nil {
			t.Fatalf("%s × %s: no runner figures", r.Placement, r.Mode)
		}
		if f.Requests != r.Requests || f.TurnPairs != r.TurnPairs || f.ToolErrors != r.ToolErrors || len(f.PerRequest) != f.Requests {
			t.Errorf("%s × %s: runner requests %d, pairs %d, tool errors %d, %d per request; replay %d, %d, %d",
				r.Placement, r.Mode, f.Requests, f.TurnPairs, f.ToolErrors, len(f.PerRequest), r.Requests, r.TurnPairs, r.ToolErrors)
		}
		prompt, cached := 0, 0
		for _, q := range f.PerRequest {
			prompt, cached = prompt+q.PromptTokens, cached+q.CachedTokens
		}
		if prompt != f.PromptTokens || cached != f.CachedTokens || cached <= 0 || cached >= prompt {
			t.Errorf("%s × %s: per request %d/%d tokens, totals %d/%d", r.Placement, r.Mode, cached, prompt, f.CachedTokens, f.PromptTokens)
		}
		if (r.WithinTurnReusePct == 100) != (f.PrefixBroken == 0) || (f.WithinTurnReusePct == 100) != (f.PrefixBroken == 0) {
			t.Errorf("%s × %s: replay in-turn %.1f%%, runner in-turn %.1f%% with %d broken pairs; want them to agree",
				r.Placement, r.Mode, r.WithinTurnReusePct, f.WithinTurnReusePct, f.PrefixBroken)
		}
	}
	def := row(t, rep, assembly.PlacementToolResult, loadstate.Turn)
	if def.WithinTurnReusePct != 100 || def.Runner.WithinTurnReusePct != 100 || def.Runner.PrefixBroken != 0 {
		t.Errorf("default: replay in-turn %.2f%%, runner %.2f%%, %d broken; want 100, 100, 0", def.WithinTurnReusePct, def.Runner.WithinTurnReusePct, def.Runner.PrefixBroken)
	}
	if sys := row(t, rep, assembly.PlacementSystem, loadstate.Turn); sys.Runner.PrefixBroken == 0 {
		t.Error("system placement: no broken pair; the check cannot tell a broken prefix")
	}
	out, errOut, code := run(t, "bench", "cache", "--runner", examples)
	if code != 0 || !strings.Contains(out, "RUNNER PROMPT") || !strings.Contains(out, "BROKEN") {
		t.Errorf("exit %d, stderr %q; the table lacks the runner's columns:\n%s", code, errOut, out)
	}
}

// The bodies the server received from the runner with the default
// configuration, pairwise within each turn: the later repeats the
// earlier's tools and messages byte for byte, and the server reports the
// whole earlier prompt as cached.
func TestBenchRunnerBodies(t *testing.T) {
	ctx := context.Background()
	episodes, err := cacheEpisodes(ctx, mustSnapshot(t, examples))
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(examples)
	if err != nil {
		t.Fatal(err)
	}
	kit, err := skillkit.New(ctx, &skillkit.Options{Roots: []string{abs}, Agent: skillkit.AgentOptions{System: benchSystem, Lifetime: loadstate.Turn, Placement: assembly.PlacementToolResult, MaxLoaded: defaultBenchMaxLoaded}})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Close()
	words := func(b []byte) int { return len(strings.Fields(string(b))) }
	for _, e := range episodes {
		t.Run(e.Name, func(t *testing.T) {
			tr, err := runnerEpisode(ctx, kit, e, words)
			if err != nil {
				t.Fatal(err)
			}
			pairs := 0
			for i := 1; i < len(tr.exchanges); i++ {
				if tr.turns[i] != tr.turns[i-1] {
					continue
				}
				pairs++
				prev, next := tr.exchanges[i-1], tr.exchanges[i]
				if ok, err := bodyExtends(prev.Body, next.Body); err != nil || !ok {
					t.Errorf("turn %d: request %d does not extend request %d (%v):\n%s\n%s", tr.turns[i], i+1, i, err, prev.Body, next.Body)
				}
				if next.Usage.CachedPromptTokens != prev.Usage.PromptTokens {
					t.Errorf("turn %d: request %d has %d cached tokens; want request %d's whole prompt, %d", tr.turns[i], i+1, next.Usage.CachedPromptTokens, i, prev.Usage.PromptTokens)
				}
			}
			if pairs == 0 {
				t.Error("no two requests in one turn")
			}
		})
	}
}

func TestBodyExtends(t *testing.T) {
	const tool = `{"type":"function","function":{"name":"skill"}}`
	body := func(tools string, msgs ...string) []byte {
		return []byte(`{"messages":[` + strings.Join(msgs, ",") + `],"model":"m","tools":[` + tools + `]}`)
	}
	sys, user, answer := `{"role":"system","content":"s"}`, `{"role":"user","content":"u"}`, `{"role":"assistant","content":"a"}`
	prev := body(tool, sys, user)
	for _, tc := range []struct {
		name string
		next []byte
		want bool
	}{
		{"extended", body(tool, sys, user, answer), true},
		{"the same", prev, true},
		{"other model and fields", []byte(`{"model":"other","stream":true,"tools":[` + tool + `],"messages":[` + sys + "," + user + `]}`), true},
		{"a message changed", body(tool, `{"role":"system","content":"S"}`, user, answer), false},
		{"a message re-encoded", body(tool, `{"content":"s","role":"system"}`, user, answer), false},
		{"a message dropped", body(tool, user, answer), false},
		{"shorter", body(tool, sys), false},
		{"another tool", body(tool+","+tool, sys, user, answer), false},
		{"no tools", body("", sys, user, answer), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bodyExtends(prev, tc.next)
			if err != nil || got != tc.want {
				t.Errorf("bodyExtends = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := bodyExtends(prev, []byte("{")); err == nil {
		t.Error("no error for a body that is not JSON")
	}
}
