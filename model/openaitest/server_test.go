package openaitest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
)

func start(t *testing.T, steps []scripted.Step, opts *openaitest.Options) *openaitest.Server {
	t.Helper()
	srv, err := openaitest.New(&scripted.Script{Steps: steps}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	return res, b.Bytes()
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name, path, body string
		opts             *openaitest.Options
		status           int
		says             string
	}{
		{name: "another route", path: "/v1/completions", body: `{}`, status: 404, says: "no route POST /v1/completions"},
		{name: "not JSON", path: openaitest.Path, body: `{`, status: 400, says: "the body is not a Chat Completions request"},
		{name: "another model", path: openaitest.Path, body: `{"model":"b","messages":[]}`, opts: &openaitest.Options{Model: "a"}, status: 404, says: "The model `b` does not exist."},
		{name: "no key", path: openaitest.Path, body: `{"model":"a","messages":[]}`, opts: &openaitest.Options{APIKey: "k"}, status: 401, says: "Incorrect API key"},
		{name: "unexpected", path: openaitest.Path, body: `{"model":"a","messages":[{"role":"user","content":"hi"}]}`, status: 400, says: `expected the last message's role \"tool\"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, []scripted.Step{{Expect: &scripted.Expect{LastRole: "tool"}, Text: "x"}}, tt.opts)
			res, body := post(t, strings.TrimSuffix(srv.URL, "/v1")+tt.path, tt.body)
			if res.StatusCode != tt.status || !strings.Contains(string(body), tt.says) {
				t.Errorf("%d %s; want %d saying %q", res.StatusCode, body, tt.status, tt.says)
			}
			if err := srv.Err(); err == nil || !strings.Contains(err.Error(), "request 1: ") {
				t.Errorf("Err() = %v; want the refusal recorded", err)
			}
		})
	}
}

// Without a scripted usage, the prompt is the body (or what
// Options.Prompt renders) and its cached part the common prefix with the
// previous prompt, as Options.Tokens counts them.
func TestComputedUsage(t *testing.T) {
	words := func(b []byte) int { return len(strings.Fields(string(b))) }
	tool := `{"type":"function","function":{"name":"skill","parameters":{"type":"object"}}}`
	first := `{"model":"m","messages":[{"role":"user","content":"a b c d"}],"tools":[` + tool + `]}`
	second := `{"model":"m","messages":[{"role":"user","content":"a b c d"},{"role":"assistant","content":"one two"}],"tools":[` + tool + `]}`
	for _, tc := range []struct {
		name   string
		prompt func([]byte) ([]byte, error)
		// prompts are the prompts of first and second; cached the part
		// of the second that is the first's.
		prompts [2]string
		cached  string
	}{
		{"body", nil, [2]string{first, second}, `{"model":"m","messages":[{"role":"user","content":"a b c d"}`},
		{"template", openaitest.TemplatePrompt,
			[2]string{tool + "\n" + `{"role":"user","content":"a b c d"}` + "\n", tool + "\n" + `{"role":"user","content":"a b c d"}` + "\n" + `{"role":"assistant","content":"one two"}` + "\n"},
			tool + "\n" + `{"role":"user","content":"a b c d"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := start(t, []scripted.Step{{Text: "one two"}, {Text: "three"}}, &openaitest.Options{Tokens: words, Prompt: tc.prompt})
			var got []model.Usage
			for _, body := range []string{first, second} {
				_, b := post(t, srv.URL+"/chat/completions", body)
				var c struct {
					Usage struct {
						Prompt     int `json:"prompt_tokens"`
						Completion int `json:"completion_tokens"`
						Details    struct {
							Cached int `json:"cached_tokens"`
						} `json:"prompt_tokens_details"`
					} `json:"usage"`
				}
				if err := json.Unmarshal(b, &c); err != nil {
					t.Fatal(err)
				}
				got = append(got, model.Usage{PromptTokens: c.Usage.Prompt, CompletionTokens: c.Usage.Completion, CachedPromptTokens: c.Usage.Details.Cached})
			}
			want := []model.Usage{
				{PromptTokens: words([]byte(tc.prompts[0])), CompletionTokens: 2},
				{PromptTokens: words([]byte(tc.prompts[1])), CompletionTokens: 1, CachedPromptTokens: words([]byte(tc.cached))},
			}
			for i := range want {
				if got[i] != want[i] || srv.Exchanges()[i].Usage != want[i] {
					t.Errorf("request %d: usage %+v (recorded %+v); want %+v", i+1, got[i], srv.Exchanges()[i].Usage, want[i])
				}
			}
		})
	}
}

func TestTemplatePromptRefusesNonJSON(t *testing.T) {
	if _, err := openaitest.TemplatePrompt([]byte("not json")); err == nil || !strings.Contains(err.Error(), "not a Chat Completions request") {
		t.Errorf("TemplatePrompt(not json) = %v; want an error saying so", err)
	}
}

// The stream is the protocol's: a role delta, text word by word, each call's
// arguments in pieces split at character boundaries, the finish, the usage
// chunk without choices, [DONE].
func TestStreamWire(t *testing.T) {
	srv := start(t, []scripted.Step{{Text: "Grüße aus", Calls: []scripted.Call{{ID: "c1", Name: "f", Arguments: `{"é":"ü"}`}}, Usage: &model.Usage{PromptTokens: 9, CompletionTokens: 3, CachedPromptTokens: 4}}}, nil)
	res, body := post(t, srv.URL+"/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`)
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, data)
		}
	}
	if len(events) != 9 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("%d events:\n%s", len(events), strings.Join(events, "\n"))
	}
	var args string
	for _, e := range events[4:6] {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Function struct{ Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatal(err)
		}
		args += c.Choices[0].Delta.ToolCalls[0].Function.Arguments
	}
	for _, want := range []string{`"content":"Grüße "`, `"content":"aus"`, `"id":"c1"`, `"finish_reason":"tool_calls"`, `"choices":[]`, `"cached_tokens":4`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the stream lacks %s", want)
		}
	}
	if args != `{"é":"ü"}` {
		t.Errorf("the arguments arrive as %q", args)
	}
	if ex := srv.Exchanges(); len(ex) != 1 || !ex[0].Stream || !ex[0].IncludeUsage || ex[0].Step != 1 {
		t.Errorf("exchange %+v", ex)
	}
}

// Close ends a stalled answer whose client is still waiting.
func TestCloseEndsStalls(t *testing.T) {
	srv, err := openaitest.New(&scripted.Script{Steps: []scripted.Step{{Text: "wait", Stall: true}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		res, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	for ex := srv.Exchanges(); len(ex) == 0 || ex[0].Step == 0; ex = srv.Exchanges() {
		time.Sleep(time.Millisecond) // the request is held once its step is taken
	}
	srv.Close()
	<-done
	select {
	case <-srv.ClientGone(1):
		t.Error("the server says the client left; it closed itself")
	default:
	}
}
