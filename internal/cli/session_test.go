package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sess runs `skillkit session ARGS --store store` in a fresh working
// directory with an empty environment, so nothing but the store and the
// session's own roots can be found.
func sess(t *testing.T, store string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"session", "--store", store}, args...)
	code = Run(context.Background(), full, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: t.TempDir()})
	return out.String(), errb.String(), code
}

// mustSess runs a session command that must succeed and returns stdout.
func mustSess(t *testing.T, store string, args ...string) string {
	t.Helper()
	out, errOut, code := sess(t, store, args...)
	if code != 0 {
		t.Fatalf("session %v: exit %d, stderr %s", args, code, errOut)
	}
	return out
}

var sessionID = regexp.MustCompile(`^[0-9a-f]{32}\n$`)

func newSess(t *testing.T, store string, args ...string) string {
	t.Helper()
	out := mustSess(t, store, append([]string{"new"}, args...)...)
	if !sessionID.MatchString(out) {
		t.Fatalf("session new printed %q, want one ID line", out)
	}
	return strings.TrimSpace(out)
}

func TestSessionNewBadFlags(t *testing.T) {
	store := filepath.Join(t.TempDir(), "s.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"new", "--mode", "forever", examples}, `--mode: load lifetime "forever" is not one of once, turn, session`},
		{[]string{"new", "--mode", "", examples}, `--mode: load lifetime ""`},
		{[]string{"new", "--placement", "inline", examples}, `--placement: placement "inline" is not one of tool-result, system`},
		{[]string{"new", "--max-loaded", "-1", examples}, "--max-loaded is -1; use 0 for no cap or a positive count"},
		{[]string{"new", "--catalog-format", "xml", examples}, `--catalog-format: catalog format "xml" is not one of reminder, list`},
		{[]string{"new", filepath.Join(t.TempDir(), "missing")}, "argument ROOT"},
		{[]string{"new", "--agent", "a/b", examples}, `--agent: the agent name "a/b" has a '/'`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := sess(t, store, tc.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no output and %q", code, out, errOut, tc.want)
			}
		})
	}
	if out := mustSess(t, store, "ls"); strings.Count(out, "\n") != 1 {
		t.Errorf("a rejected new created a session:\n%s", out)
	}
}

// promptJSON is the Chat Completions shape `session prompt --json` prints,
// decoded field by field so that a renamed or missing field fails.
type promptJSON struct {
	Messages []struct {
		Role      *string `json:"role"`
		Content   *string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func TestSessionFlow(t *testing.T) {
	store := filepath.Join(t.TempDir(), "state", "s.db") // the folder is created
	id := newSess(t, store, "--system", "You are terse.", examples)

	if out := mustSess(t, store, "user", id, "Review my API."); out != "" {
		t.Errorf("user printed %q", out)
	}
	if out := mustSess(t, store, "call", id, "skill_load", `{"skill":"api-style-guide"}`); out != "loaded: api-style-guide\n" {
		t.Errorf("call printed %q", out)
	}
	if out := mustSess(t, store, "call", id, "skill_select_docs", `{"skill":"api-style-guide","docs":["references/errors.md"],"mode":"add"}`); !strings.Contains(out, "references/errors.md") {
		t.Errorf("select printed %q", out)
	}

	// A tool error prints the result and exits 1; it is still recorded,
	// and so is a call of a tool the agent does not have, as a model's
	// would be.
	out, _, code := sess(t, store, "call", id, "skill_load", `{"skill":"nope"}`)
	if code != 1 || out != "Error: skill \"nope\" is unknown or no longer available\n" {
		t.Errorf("tool error: exit %d, stdout %q", code, out)
	}
	out, _, code = sess(t, store, "call", id, "nope")
	if code != 1 || out != "Error: there is no tool \"nope\"; the tools are: skill, skill_load, skill_select_docs, skill_list_docs, skill_read\n" {
		t.Errorf("unknown tool: exit %d, stdout %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", id, "skill_load", "{not json"}, `argument JSON is not valid JSON: {not json; pass the tool arguments as one JSON object, for example '{"skill":"..."}'`},
		{[]string{"call", id, "skill", "{not json"}, `for example '{"name":"..."}'`},
		{[]string{"call", "0123456789abcdef0123456789abcdef", "skill_load", "{}"}, "session not found"},
		{[]string{"user", id}, "accepts 2 arg(s)"},
	} {
		_, errOut, code := sess(t, store, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}

	before := mustSess(t, store, "show", "--json", id)
	text := mustSess(t, store, "prompt", id)
	raw := mustSess(t, store, "prompt", "--json", id)
	if after := mustSess(t, store, "show", "--json", id); after != before {
		t.Errorf("prompt changed the session:\n--- before ---\n%s\n--- after ---\n%s", before, after)
	}
	if again := mustSess(t, store, "prompt", "--json", id); again != raw {
		t.Error("two prompts of an unchanged session differ")
	}
	for _, want := range []string{"── system ──\nYou are terse.", "── user ──\nReview my API.", "→ skill_load {\"skill\":\"api-style-guide\"}", "[Doc] references/errors.md", "── tools ──\n[\"skill\",\"skill_load\""} {
		if !strings.Contains(text, want) {
			t.Errorf("text prompt lacks %q:\n%s", want, text)
		}
	}

	var p promptJSON
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("prompt --json: %v\n%s", err, raw)
	}
	roles := []string{}
	calls := map[string]string{}
	for i, m := range p.Messages {
		if m.Role == nil || m.Content == nil {
			t.Fatalf("message %d lacks role or content", i)
		}
		roles = append(roles, *m.Role)
		for _, c := range m.ToolCalls {
			if *m.Role != "assistant" || c.Type != "function" || c.ID == "" || !json.Valid([]byte(c.Function.Arguments)) {
				t.Errorf("message %d: bad tool call %+v", i, c)
			}
			calls[c.ID] = c.Function.Name
		}
		if *m.Role == "tool" {
			if _, ok := calls[m.ToolCallID]; !ok {
				t.Errorf("message %d: tool result for %q, which no earlier assistant message called", i, m.ToolCallID)
			}
		}
	}
	wantRoles := "system user user assistant tool assistant tool assistant tool assistant tool"
	if got := strings.Join(roles, " "); got != wantRoles {
		t.Errorf("roles %q, want %q", got, wantRoles)
	}
	names := []string{}
	for _, tl := range p.Tools {
		var schema struct {
			Type string `json:"type"`
		}
		if tl.Type != "function" || tl.Function.Description == "" || json.Unmarshal(tl.Function.Parameters, &schema) != nil || schema.Type != "object" {
			t.Errorf("tool %+v is not a Chat Completions function tool", tl)
		}
		names = append(names, tl.Function.Name)
	}
	if got := strings.Join(names, " "); got != "skill skill_load skill_select_docs skill_list_docs skill_read" {
		t.Errorf("tools %q", got)
	}

	// ls lists the session; rm deletes it; later commands name it missing.
	if out := mustSess(t, store, "ls"); !strings.Contains(out, id) || !strings.HasPrefix(out, "ID") {
		t.Errorf("ls:\n%s", out)
	}
	if out := mustSess(t, store, "show", id); !strings.Contains(out, "session "+id) || !strings.Contains(out, "mode turn, placement tool-result, max loaded 0") {
		t.Errorf("show:\n%s", out)
	}
	mustSess(t, store, "rm", id)
	if out := mustSess(t, store, "ls"); strings.Contains(out, id) {
		t.Errorf("ls after rm:\n%s", out)
	}
	for _, args := range [][]string{{"show", id}, {"prompt", id}, {"rm", id}} {
		if _, errOut, code := sess(t, store, args...); code != 2 || !strings.Contains(errOut, "session not found") {
			t.Errorf("%v after rm: exit %d, %q", args, code, errOut)
		}
	}
}

func TestSessionPromptGolden(t *testing.T) {
	store := filepath.Join(t.TempDir(), "s.db")
	id := newSess(t, store, "--system", "You are terse.", "--max-loaded", "2", examples)
	mustSess(t, store, "user", id, "Which error format do we use?")
	mustSess(t, store, "call", id, "skill_load", `{"skill":"api-style-guide","docs":["references/errors.md"]}`)
	mustSess(t, store, "call", id, "skill", `{"name":"csv-stats"}`)
	mustSess(t, store, "call", id, "skill_list_docs", `{"skill":"api-style-guide"}`)
	out := mustSess(t, store, "prompt", "--json", id)
	// The skill tool names the skill's absolute folder; the session ID
	// would appear if a message carried it.
	abs, err := filepath.Abs(examples)
	if err != nil {
		t.Fatal(err)
	}
	out = strings.ReplaceAll(out, abs, "EXAMPLES")
	golden(t, "session_prompt_json.golden", strings.ReplaceAll(out, id, "SESSION_ID"))
}

func TestSessionAgentIsolation(t *testing.T) {
	store := filepath.Join(t.TempDir(), "s.db")
	id := newSess(t, store, "--mode", "session", examples)
	mustSess(t, store, "user", id, "Delegate the CSV work.")
	mustSess(t, store, "--agent", "sub", "call", id, "skill_load", `{"skill":"csv-stats"}`)
	mustSess(t, store, "call", id, "skill_load", `{"skill":"unicode-notes"}`)

	const csvBody, unicodeBody = "[Loaded] csv-stats", "[Loaded] unicode-notes"
	main := mustSess(t, store, "prompt", "--json", id)
	sub := mustSess(t, store, "--agent", "sub", "prompt", "--json", id)
	if strings.Contains(main, csvBody) || !strings.Contains(main, unicodeBody) {
		t.Errorf("the default agent's prompt must carry unicode-notes only:\n%s", main)
	}
	if !strings.Contains(sub, csvBody) || strings.Contains(sub, unicodeBody) {
		t.Errorf("the sub-agent's prompt must carry csv-stats only:\n%s", sub)
	}
	// The loads are recorded per agent.
	show := mustSess(t, store, "show", id)
	for _, want := range []string{"temp:skill:loaded_by_agent:sub/csv-stats", "temp:skill:loaded_by_agent:default/unicode-notes"} {
		if !strings.Contains(show, want) {
			t.Errorf("show lacks %s:\n%s", want, show)
		}
	}
	if strings.Contains(show, "loaded_by_agent:default/csv-stats") {
		t.Errorf("the sub-agent's load reached the default agent:\n%s", show)
	}
	// A user message in session mode unloads nothing; the sub-agent's
	// loads still never reach the default agent.
	mustSess(t, store, "user", id, "Next.")
	if p := mustSess(t, store, "prompt", id); strings.Contains(p, csvBody) {
		t.Errorf("after a user message the default agent sees csv-stats:\n%s", p)
	}
}

func TestSessionRemembersRoots(t *testing.T) {
	store := filepath.Join(t.TempDir(), "s.db")
	root := t.TempDir()
	writeSkill(t, root, "alpha", "---\nname: alpha\ndescription: The alpha skill.\n---\nAlpha body.\n")
	id := newSess(t, store, root) // every later command runs in another working directory
	if out := mustSess(t, store, "call", id, "skill", `{"name":"alpha"}`); !strings.Contains(out, "Alpha body.") {
		t.Errorf("the session lost its root: %q", out)
	}
	show := mustSess(t, store, "show", "--json", id)
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show, `\"roots\":[\"`+abs+`\"]`) {
		t.Errorf("show --json lacks the absolute root %s:\n%s", abs, show)
	}
	if out := mustSess(t, store, "prompt", id); !strings.Contains(out, "`alpha`: The alpha skill.") {
		t.Errorf("the catalog lacks alpha:\n%s", out)
	}
}

func TestSessionAgentsInLs(t *testing.T) {
	store := filepath.Join(t.TempDir(), "s.db")
	a, b := newSess(t, store, examples), newSess(t, store, "--mode", "once", examples)
	out := mustSess(t, store, "ls")
	if !strings.Contains(out, a) || !strings.Contains(out, b) || strings.Count(out, "\n") != 3 {
		t.Errorf("ls:\n%s", out)
	}
}
