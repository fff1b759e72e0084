package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, script string
		want         []scripted.Step
		err          string
	}{{
		name:   "arguments as an object or as exact text",
		script: `{"steps":[{"calls":[{"id":"c1","name":"f","arguments":{ "a" : [1, 2] }},{"name":"g","arguments":"{not json"}]}]}`,
		want:   []scripted.Step{{Calls: []scripted.Call{{ID: "c1", Name: "f", Arguments: `{"a":[1,2]}`}, {Name: "g", Arguments: "{not json"}}}},
	}, {
		name:   "expectations, usage, failures",
		script: `{"steps":[{"expect":{"tools":[],"last_role":"user"},"text":"a","usage":{"prompt_tokens":3,"completion_tokens":1,"cached_tokens":2}},{"error":{"status":429,"message":"slow","retry_after":"2"}},{"disconnect":true}]}`,
		want: []scripted.Step{
			{Expect: &scripted.Expect{Tools: []string{}, LastRole: "user"}, Text: "a", Usage: &model.Usage{PromptTokens: 3, CompletionTokens: 1, CachedPromptTokens: 2}},
			{Error: &scripted.Error{Status: 429, Message: "slow", RetryAfter: "2"}},
			{Disconnect: true},
		},
	},
		{name: "the package doc's script", script: `{"steps": [
	  {"expect": {"tools_include": ["skill"], "last_role": "user"},
	   "calls": [{"id": "call_1", "name": "skill", "arguments": {"name": "csv-stats"}}],
	   "usage": {"prompt_tokens": 900, "completion_tokens": 12}},
	  {"expect": {"tool_results": ["call_1"]},
	   "text": "The sample has 3 rows."}
	]}`, want: []scripted.Step{
			{Expect: &scripted.Expect{ToolsInclude: []string{"skill"}, LastRole: "user"}, Calls: []scripted.Call{{ID: "call_1", Name: "skill", Arguments: `{"name":"csv-stats"}`}}, Usage: &model.Usage{PromptTokens: 900, CompletionTokens: 12}},
			{Expect: &scripted.Expect{ToolResults: []string{"call_1"}}, Text: "The sample has 3 rows."},
		}},
		{name: "a misspelt field", script: `{"steps":[{"expect":{"tool":["x"]}}]}`, err: `test.json: json: unknown field "tool"`},
		{name: "no steps", script: `{"steps":[]}`, err: "test.json: the script has no steps"},
		{name: "two values", script: `{"steps":[{"text":"a"}]} {}`, err: "more than one JSON value"},
		{name: "fails and answers", script: `{"steps":[{"text":"a"},{"error":{"status":500},"text":"b"}]}`, err: "steps[1] both fails and answers"},
		{name: "fails twice", script: `{"steps":[{"error":{"status":500},"disconnect":true}]}`, err: "steps[0] has both error and disconnect"},
		{name: "a status that is no error", script: `{"steps":[{"error":{"status":200}}]}`, err: "steps[0].error.status is 200"},
		{name: "a call without a name", script: `{"steps":[{"calls":[{"id":"x"}]}]}`, err: "steps[0].calls[0] has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scripted.Parse([]byte(tt.script), "test.json")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "scripted model: ") {
					t.Fatalf("error %v; want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgumentsMarshal(t *testing.T) {
	for args, want := range map[scripted.Arguments]string{
		`{"a":1}`:   `{"a":1}`,
		`[1]`:       `[1]`,
		`{broken`:   `"{broken"`,
		`plain`:     `"plain"`,
		`"quoted"`:  `"\"quoted\""`,
		` {"b":2} `: `{"b":2}`,
	} {
		b, err := json.Marshal(args)
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%q) = %s, %v; want %s", args, b, err, want)
		}
	}
}

func request(tools []string, msgs ...assembly.Message) *model.Request {
	r := &model.Request{Messages: msgs}
	for _, n := range tools {
		r.Tools = append(r.Tools, assembly.ToolSpec{Type: "function", Function: assembly.FunctionSpec{Name: n}})
	}
	return r
}

func TestExpect(t *testing.T) {
	req := request([]string{"skill", "skill_load", "weather"},
		assembly.Message{Role: "user", Content: "hi"},
		assembly.Message{Role: "assistant", ToolCalls: []assembly.ToolCall{{ID: "a"}, {ID: "b"}}},
		assembly.Message{Role: "tool", ToolCallID: "a", Content: "result A"},
		assembly.Message{Role: "tool", ToolCallID: "b", Content: "result B"})
	req.CacheKey = "k1"
	req.Output = &model.OutputSchema{Schema: &jsonschema.Schema{}}
	tests := []struct {
		name   string
		expect scripted.Expect
		err    string
	}{
		{name: "tools in any order", expect: scripted.Expect{Tools: []string{"weather", "skill", "skill_load"}}},
		{name: "tools differ", expect: scripted.Expect{Tools: []string{"skill"}}, err: `expected the tools ["skill"], the request offers ["skill" "skill_load" "weather"]`},
		{name: "no tools expected", expect: scripted.Expect{Tools: []string{}}, err: "expected the tools []"},
		{name: "included", expect: scripted.Expect{ToolsInclude: []string{"weather"}, ToolsExclude: []string{"workspace_exec"}}},
		{name: "not included", expect: scripted.Expect{ToolsInclude: []string{"workspace_exec"}}, err: `expected the tool "workspace_exec" among`},
		{name: "excluded", expect: scripted.Expect{ToolsExclude: []string{"skill"}}, err: `expected no tool "skill"`},
		{name: "last message", expect: scripted.Expect{LastRole: "tool", LastContains: "result B"}},
		{name: "last role", expect: scripted.Expect{LastRole: "user"}, err: `expected the last message's role "user", it is "tool"`},
		{name: "last content", expect: scripted.Expect{LastContains: "result A"}, err: `expected the last message to contain "result A"`},
		{name: "contains and lacks", expect: scripted.Expect{Contains: []string{"result A", "result B"}, Lacks: []string{"secret"}}},
		{name: "contains missing", expect: scripted.Expect{Contains: []string{"result C"}}, err: `expected a message containing "result C", none does`},
		{name: "lacks present", expect: scripted.Expect{Lacks: []string{"result A"}}, err: `expected no message containing "result A", message`},
		{name: "tool results", expect: scripted.Expect{ToolResults: []string{"a", "b"}}},
		{name: "tool results differ", expect: scripted.Expect{ToolResults: []string{"b", "a"}}, err: `expected the trailing tool results to answer ["b" "a"], they answer ["a" "b"]`},
		{name: "output", expect: scripted.Expect{Output: model.DefaultOutputName}},
		{name: "output differs", expect: scripted.Expect{Output: "report"}, err: `expected the output schema "report", the request asks for "output"`},
		{name: "cache key", expect: scripted.Expect{CacheKey: "k1"}},
		{name: "cache key differs", expect: scripted.Expect{CacheKey: "k2"}, err: `expected the cache key "k2", the request has "k1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.expect.Check(req)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Check = %v; want %q", err, tt.err)
			}
		})
	}
	if err := (&scripted.Expect{LastRole: "user"}).Check(&model.Request{}); err == nil {
		t.Error("an empty request has a last message")
	}
}

// modes plays a step with Generate and with Stream.
var modes = map[string]func(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error){
	"generate": func(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error) {
		return m.Generate(ctx, req)
	},
	"stream": func(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error) {
		return model.Collect(m.Stream(ctx, req))
	},
}

func TestPlay(t *testing.T) {
	script := &scripted.Script{Steps: []scripted.Step{
		{Expect: &scripted.Expect{ToolsInclude: []string{"weather"}}, Text: "Checking.", Calls: []scripted.Call{{ID: "call_1", Name: "weather", Arguments: `{"city":"Oslo"}`}}, Usage: &model.Usage{PromptTokens: 10, CompletionTokens: 4}},
		{Expect: &scripted.Expect{ToolResults: []string{"call_1"}}, Text: "Sunny."},
	}}
	for name, call := range modes {
		t.Run(name, func(t *testing.T) {
			m, err := scripted.New(script, &scripted.Options{Name: "replay", Label: "weather.json"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			r1, err := call(ctx, m, request([]string{"weather"}, assembly.Message{Role: "user", Content: "weather?"}))
			if err != nil {
				t.Fatal(err)
			}
			want := &model.Response{Text: "Checking.", Calls: []session.ToolCall{{ID: "call_1", Name: "weather", Arguments: `{"city":"Oslo"}`}}, FinishReason: model.FinishToolCalls, Usage: model.Usage{PromptTokens: 10, CompletionTokens: 4}, Model: "replay"}
			if diff := cmp.Diff(want, r1); diff != "" {
				t.Errorf("first answer (-want +got):\n%s", diff)
			}
			if err := m.Done(); err == nil || !strings.Contains(err.Error(), "1 of 2 steps were played; step 2 was not") {
				t.Errorf("Done after one step: %v", err)
			}
			r2, err := call(ctx, m, request(nil, assembly.Message{Role: "tool", ToolCallID: "call_1", Content: "sunny"}))
			if err != nil || r2.Text != "Sunny." || r2.FinishReason != model.FinishStop {
				t.Fatalf("second answer %+v, %v", r2, err)
			}
			if err := m.Done(); err != nil {
				t.Error(err)
			}
			_, err = call(ctx, m, request(nil))
			if !errors.Is(err, scripted.ErrScriptEnded) || !strings.Contains(err.Error(), "weather.json: request 3") {
				t.Errorf("a third request: %v; want ErrScriptEnded naming request 3 and the script", err)
			}
		})
	}
}

func TestUnexpectedRequest(t *testing.T) {
	for name, call := range modes {
		t.Run(name, func(t *testing.T) {
			m, _ := scripted.New(&scripted.Script{Steps: []scripted.Step{{Expect: &scripted.Expect{Tools: []string{"skill"}}, Text: "x"}}}, nil)
			_, err := call(context.Background(), m, request([]string{"other"}))
			if !errors.Is(err, scripted.ErrUnexpectedRequest) || !strings.Contains(err.Error(), `scripted model: script: step 1: `) || !strings.Contains(err.Error(), `offers ["other"]`) {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name string
		step scripted.Step
		want *model.APIError
		is   error
	}{
		{name: "rate limit", step: scripted.Step{Error: &scripted.Error{Status: 429, Message: "slow down", RetryAfter: "2"}},
			want: &model.APIError{Status: 429, Message: "slow down", Model: scripted.DefaultName, Retryable: true, RetryAfter: 2e9, Attempts: 1}},
		{name: "bad request from a body", step: scripted.Step{Error: &scripted.Error{Status: 400, Body: " bad \n", Code: "x"}},
			want: &model.APIError{Status: 400, Message: "bad", Code: "x", Model: scripted.DefaultName, Attempts: 1}},
		{name: "disconnect", step: scripted.Step{Disconnect: true}, is: scripted.ErrDisconnected},
	}
	for _, tt := range tests {
		for name, call := range modes {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				m, _ := scripted.New(&scripted.Script{Steps: []scripted.Step{tt.step}}, nil)
				_, err := call(context.Background(), m, request(nil))
				if tt.is != nil {
					if !errors.Is(err, tt.is) {
						t.Fatalf("error %v; want %v", err, tt.is)
					}
					return
				}
				var ae *model.APIError
				if !errors.As(err, &ae) {
					t.Fatalf("error %v; want a *model.APIError", err)
				}
				if diff := cmp.Diff(tt.want, ae); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestStall(t *testing.T) {
	m, _ := scripted.New(&scripted.Script{Steps: []scripted.Step{{Text: "partial", Stall: true}, {Text: "partial", Stall: true}}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	for c, err := range m.Stream(ctx, request(nil)) {
		if err != nil {
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "step 1 stalled") {
				t.Errorf("error %v", err)
			}
			got = append(got, "error")
			continue
		}
		got = append(got, c.Text)
		cancel()
	}
	if diff := cmp.Diff([]string{"partial", "error"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := m.Generate(ctx, request(nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("Generate after cancel: %v", err)
	}
	if m.Played() != 1 {
		t.Errorf("%d played; a request with an ended context takes no step", m.Played())
	}
}

// Concurrent requests each take a step of their own (run with -race).
func TestConcurrent(t *testing.T) {
	const n = 32
	steps := make([]scripted.Step, n)
	for i := range steps {
		steps[i] = scripted.Step{Text: "x"}
	}
	m, _ := scripted.New(&scripted.Script{Steps: steps}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	for range n + 1 {
		wg.Go(func() {
			_, err := m.Generate(context.Background(), request(nil))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	ended := 0
	for err := range errs {
		if errors.Is(err, scripted.ErrScriptEnded) {
			ended++
		} else if err != nil {
			t.Error(err)
		}
	}
	if ended != 1 || m.Played() != n {
		t.Errorf("%d requests past the end, %d played; want 1 and %d", ended, m.Played(), n)
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(`{"steps":[{"text":"hi"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := scripted.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), request(nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), request(nil)); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v does not name the file", err)
	}
	if _, err := scripted.Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := scripted.New(&scripted.Script{}, &scripted.Options{Label: "empty"}); err == nil || !strings.Contains(err.Error(), "empty: the script has no steps") {
		t.Errorf("an empty script: %v", err)
	}
}
