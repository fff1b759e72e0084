package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openai"
	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
)

// harness is the adapter against an openaitest server, with the retry
// waits and the captured request bodies recorded instead of slept.
type harness struct {
	srv *openaitest.Server
	m   *openai.Model

	mu       sync.Mutex
	sleeps   []time.Duration
	captured []capture
}

type capture struct {
	attempt int
	body    []byte
}

// now is the clock the harness gives the retry policy.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newHarness(t *testing.T, steps []scripted.Step, srvOpts *openaitest.Options, edit func(*openai.Options)) *harness {
	t.Helper()
	srv, err := openaitest.New(&scripted.Script{Steps: steps}, srvOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	h := &harness{srv: srv}
	o := &openai.Options{
		BaseURL: srv.URL, Model: "test-model",
		Retry: &openai.Retry{
			Backoff: func(n int) time.Duration { return time.Duration(n) * time.Second },
			Sleep: func(ctx context.Context, d time.Duration) error {
				h.mu.Lock()
				defer h.mu.Unlock()
				h.sleeps = append(h.sleeps, d)
				return ctx.Err()
			},
			Now: func() time.Time { return now },
		},
		CaptureRequest: func(attempt int, body []byte) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.captured = append(h.captured, capture{attempt, body})
		},
	}
	if edit != nil {
		edit(o)
	}
	h.m, err = openai.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// modes runs f once with Generate and once with Stream.
var modes = []struct {
	name string
	call func(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error)
}{
	{"generate", func(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error) {
		return m.Generate(ctx, req)
	}},
	{"stream", func(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error) {
		return model.Collect(m.Stream(ctx, req))
	}},
}

func userRequest(text string) *model.Request {
	return &model.Request{Messages: []assembly.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: text}}}
}

func weatherTool() assembly.ToolSpec {
	return assembly.ToolSpec{Type: "function", Function: assembly.FunctionSpec{
		Name: "weather", Description: "The weather in a city.",
		Parameters: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}}, Required: []string{"city"}},
	}}
}

func TestAnswers(t *testing.T) {
	tests := []struct {
		name  string
		steps []scripted.Step
		req   *model.Request
		want  *model.Response
	}{{
		name:  "text with usage and cached tokens",
		steps: []scripted.Step{{Text: "Hello there, world.", Usage: &model.Usage{PromptTokens: 1200, CompletionTokens: 5, CachedPromptTokens: 1024}}},
		req:   userRequest("hi"),
		want:  &model.Response{Text: "Hello there, world.", FinishReason: model.FinishStop, Usage: model.Usage{PromptTokens: 1200, CompletionTokens: 5, CachedPromptTokens: 1024}, ID: "chatcmpl-openaitest-1", Model: "test-model"},
	}, {
		name: "parallel tool calls with the provider's IDs",
		steps: []scripted.Step{{
			Expect: &scripted.Expect{Tools: []string{"weather"}},
			Text:   "Checking both.",
			Calls: []scripted.Call{
				{ID: "call_Xk29", Name: "weather", Arguments: `{"city":"Oslo"}`},
				{ID: "call_b7Qp", Name: "weather", Arguments: `{"city":"Zürich — 北京"}`},
			},
			Usage: &model.Usage{PromptTokens: 50, CompletionTokens: 20},
		}},
		req: &model.Request{Messages: userRequest("weather?").Messages, Tools: []assembly.ToolSpec{weatherTool()}},
		want: &model.Response{Text: "Checking both.", FinishReason: model.FinishToolCalls, ID: "chatcmpl-openaitest-1", Model: "test-model",
			Calls: []session.ToolCall{
				{ID: "call_Xk29", Name: "weather", Arguments: `{"city":"Oslo"}`},
				{ID: "call_b7Qp", Name: "weather", Arguments: `{"city":"Zürich — 北京"}`},
			},
			Usage: model.Usage{PromptTokens: 50, CompletionTokens: 20}},
	}, {
		name:  "malformed arguments kept verbatim",
		steps: []scripted.Step{{Calls: []scripted.Call{{ID: "c1", Name: "weather", Arguments: `{"city": Oslo`}}, Usage: &model.Usage{}}},
		req:   &model.Request{Messages: userRequest("weather?").Messages, Tools: []assembly.ToolSpec{weatherTool()}},
		want: &model.Response{FinishReason: model.FinishToolCalls, ID: "chatcmpl-openaitest-1", Model: "test-model",
			Calls: []session.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city": Oslo`}}},
	}, {
		name:  "finish reason as the provider says",
		steps: []scripted.Step{{Text: "cut", FinishReason: model.FinishLength, Usage: &model.Usage{}}},
		req:   userRequest("long"),
		want:  &model.Response{Text: "cut", FinishReason: model.FinishLength, ID: "chatcmpl-openaitest-1", Model: "test-model"},
	}}
	for _, tt := range tests {
		for _, mode := range modes {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				h := newHarness(t, tt.steps, nil, nil)
				got, err := mode.call(context.Background(), h.m, tt.req)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("response (-want +got):\n%s", diff)
				}
				if err := h.srv.Err(); err != nil {
					t.Error(err)
				}
				ex := h.srv.Exchanges()
				if len(ex) != 1 || ex[0].Stream != (mode.name == "stream") || ex[0].IncludeUsage != (mode.name == "stream") {
					t.Errorf("exchanges: %+v; want one, streaming with usage included iff streaming", ex)
				}
			})
		}
	}
}

// The prompt-cache accounting the server computes (the common prefix of
// consecutive bodies) reaches the caller as cached prompt tokens.
func TestCachedTokenAccounting(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Text: "one"}, {Text: "two"}}, nil, nil)
			ctx := context.Background()
			req := userRequest("first question")
			r1, err := mode.call(ctx, h.m, req)
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = append(req.Messages, assembly.Message{Role: "assistant", Content: r1.Text}, assembly.Message{Role: "user", Content: "second"})
			r2, err := mode.call(ctx, h.m, req)
			if err != nil {
				t.Fatal(err)
			}
			ex := h.srv.Exchanges()
			if r1.Usage.CachedPromptTokens != 0 || r1.Usage.PromptTokens != len(ex[0].Body) {
				t.Errorf("first usage %+v; want %d prompt tokens, none cached", r1.Usage, len(ex[0].Body))
			}
			lcp := 0
			for lcp < len(ex[0].Body) && ex[0].Body[lcp] == ex[1].Body[lcp] {
				lcp++
			}
			want := model.Usage{PromptTokens: len(ex[1].Body), CompletionTokens: len("two"), CachedPromptTokens: lcp}
			if r2.Usage != want || lcp == 0 {
				t.Errorf("second usage %+v; want %+v", r2.Usage, want)
			}
			if sum := r1.Usage.Add(r2.Usage); sum.CachedPromptTokens != lcp || sum.PromptTokens != len(ex[0].Body)+len(ex[1].Body) {
				t.Errorf("sum %+v", sum)
			}
		})
	}
}

func TestStreamPieces(t *testing.T) {
	h := newHarness(t, []scripted.Step{{
		Text:  "Two calls now.",
		Calls: []scripted.Call{{ID: "call_1", Name: "weather", Arguments: `{"city":"Oslo"}`}, {ID: "call_2", Name: "weather", Arguments: `{"city":"Rome"}`}},
	}}, nil, nil)
	var text strings.Builder
	args := map[int]string{}
	ids := map[int]string{}
	var final *model.Response
	pieces := 0
	for c, err := range h.m.Stream(context.Background(), userRequest("go")) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Text)
		if c.Call != nil {
			pieces++
			args[c.Call.Index] += c.Call.Arguments
			if c.Call.ID != "" {
				ids[c.Call.Index] = c.Call.ID
			}
		}
		if c.Response != nil {
			final = c.Response
		}
	}
	if text.String() != "Two calls now." || final == nil || final.Text != text.String() {
		t.Fatalf("text %q, final %+v", text.String(), final)
	}
	if pieces != 6 || args[0] != `{"city":"Oslo"}` || args[1] != `{"city":"Rome"}` || ids[0] != "call_1" || ids[1] != "call_2" {
		t.Errorf("%d call pieces, args %v, ids %v; want 6 pieces (name, two halves of the arguments, per call)", pieces, args, ids)
	}
	if final.Usage.PromptTokens == 0 {
		t.Errorf("usage %+v; want the usage of the stream's last chunk", final.Usage)
	}
}

func TestRetries(t *testing.T) {
	ok := scripted.Step{Text: "done", Usage: &model.Usage{PromptTokens: 1, CompletionTokens: 1}}
	e := func(status int, retryAfter, msg string) scripted.Step {
		return scripted.Step{Error: &scripted.Error{Status: status, RetryAfter: retryAfter, Message: msg}}
	}
	tests := []struct {
		name     string
		steps    []scripted.Step
		retry    func(*openai.Retry)
		requests int             // requests the server receives
		sleeps   []time.Duration // waits asked of Sleep
		status   int             // of the *model.APIError, 0 when the call succeeds
		errHas   []string
		retried  bool // APIError.Retryable
	}{{
		name:     "429 with Retry-After seconds, then success",
		steps:    []scripted.Step{e(429, "3", "Rate limit reached for requests"), ok},
		requests: 2, sleeps: []time.Duration{3 * time.Second},
	}, {
		name:     "429 with Retry-After as an HTTP date",
		steps:    []scripted.Step{e(429, now.Add(7*time.Second).Format(http.TimeFormat), "slow down"), ok},
		requests: 2, sleeps: []time.Duration{7 * time.Second},
	}, {
		name:     "Retry-After in the past retries at once",
		steps:    []scripted.Step{e(503, now.Add(-time.Minute).Format(http.TimeFormat), "busy"), ok},
		requests: 2, sleeps: []time.Duration{0},
	}, {
		name:     "500 and 503 retried with backoff",
		steps:    []scripted.Step{e(500, "", "boom"), e(503, "", "overloaded"), ok},
		requests: 3, sleeps: []time.Duration{time.Second, 2 * time.Second},
	}, {
		name:     "connection reset retried",
		steps:    []scripted.Step{{Disconnect: true}, ok},
		requests: 2, sleeps: []time.Duration{time.Second},
	}, {
		name:     "400 not retried, the server's message in the error",
		steps:    []scripted.Step{{Error: &scripted.Error{Status: 400, Message: "Invalid schema for function 'weather': 'object' is not valid", Type: "invalid_request_error", Code: "invalid_function_parameters"}}, ok},
		requests: 1, status: 400,
		errHas: []string{"400 Bad Request", "Invalid schema for function 'weather'", "test-model", "/v1/chat/completions"},
	}, {
		name:     "401 says to check the key",
		steps:    []scripted.Step{e(401, "", "Incorrect API key provided"), ok},
		requests: 1, status: 401,
		errHas: []string{"401 Unauthorized", "Incorrect API key provided", "check the API key", "OPENAI_API_KEY"},
	}, {
		name:     "404 says to check the base URL",
		steps:    []scripted.Step{{Error: &scripted.Error{Status: 404, Body: "404 page not found"}}, ok},
		requests: 1, status: 404,
		errHas: []string{"404 Not Found: 404 page not found", "check the base URL", "/v1"},
	}, {
		name:     "retries bounded by MaxAttempts",
		steps:    []scripted.Step{e(500, "", "a"), e(502, "", "b"), e(503, "", "c"), ok},
		retry:    func(r *openai.Retry) { r.MaxAttempts = 3 },
		requests: 3, sleeps: []time.Duration{time.Second, 2 * time.Second}, status: 503, retried: true,
		errHas: []string{"503 Service Unavailable: c", "after 3 attempts", "the server failed"},
	}, {
		name:     "MaxAttempts 1 never retries",
		steps:    []scripted.Step{e(429, "1", "limit"), ok},
		retry:    func(r *openai.Retry) { r.MaxAttempts = 1 },
		requests: 1, status: 429, retried: true,
		errHas: []string{"429 Too Many Requests: limit", "rate-limiting"},
	}, {
		name:     "a Retry-After beyond the wait budget ends the retries",
		steps:    []scripted.Step{e(429, "120", "quota"), ok},
		requests: 1, status: 429, retried: true,
		errHas: []string{"the server asks to wait 2m0s", "retry budget of 1m0s"},
	}, {
		name:     "the wait budget adds up",
		steps:    []scripted.Step{e(500, "", "a"), e(500, "", "b"), e(500, "", "c"), ok},
		retry:    func(r *openai.Retry) { r.MaxWait = 2500 * time.Millisecond },
		requests: 2, sleeps: []time.Duration{time.Second}, status: 500, retried: true,
		errHas: []string{"after 2 attempts", "the backoff asks to wait 2s"},
	}, {
		name:     "a proxy's plain-text 502 is quoted",
		steps:    []scripted.Step{{Error: &scripted.Error{Status: 502, Body: "<html>Bad Gateway</html>\n"}}},
		retry:    func(r *openai.Retry) { r.MaxAttempts = 1 },
		requests: 1, status: 502, retried: true,
		errHas: []string{"502 Bad Gateway: <html>Bad Gateway</html>"},
	}, {
		name:     "vLLM's error shape",
		steps:    []scripted.Step{{Error: &scripted.Error{Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`}}},
		requests: 1, status: 400,
		errHas: []string{"400 Bad Request: This model's maximum context length is 4096 tokens."},
	}, {
		name:     "Ollama's error shape",
		steps:    []scripted.Step{{Error: &scripted.Error{Status: 404, Body: `{"error":"model \"llama9\" not found, try pulling it first"}`}}},
		requests: 1, status: 404,
		errHas: []string{`model "llama9" not found`, "check the model name", "SKILLKIT_MODEL"},
	}}
	for _, tt := range tests {
		for _, mode := range modes {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				h := newHarness(t, tt.steps, nil, func(o *openai.Options) {
					if tt.retry != nil {
						tt.retry(o.Retry)
					}
				})
				resp, err := mode.call(context.Background(), h.m, userRequest("hi"))
				if got := len(h.srv.Exchanges()); got != tt.requests {
					t.Errorf("%d requests; want %d", got, tt.requests)
				}
				if diff := cmp.Diff(tt.sleeps, h.sleeps); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
				if tt.status == 0 {
					if err != nil || resp.Text != "done" {
						t.Fatalf("got %+v, %v; want the answer after the retries", resp, err)
					}
					return
				}
				var ae *model.APIError
				if !errors.As(err, &ae) {
					t.Fatalf("error %v (%T); want a *model.APIError", err, err)
				}
				if ae.Status != tt.status || ae.Retryable != tt.retried || ae.Attempts != tt.requests {
					t.Errorf("APIError %+v; want status %d, retryable %v, %d attempts", ae, tt.status, tt.retried, tt.requests)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
			})
		}
	}
}

// A context that ends while the adapter waits to retry stops it, with an
// error that is both the context's and the last failure's.
func TestRetryWaitCancelled(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := newHarness(t, []scripted.Step{{Error: &scripted.Error{Status: 503, Message: "busy"}}, {Text: "late"}}, nil, func(o *openai.Options) {
				o.Retry.Sleep = func(ctx context.Context, _ time.Duration) error {
					cancel()
					return ctx.Err()
				}
			})
			_, err := mode.call(ctx, h.m, userRequest("hi"))
			var ae *model.APIError
			if !errors.Is(err, context.Canceled) || !errors.As(err, &ae) || ae.Status != 503 {
				t.Fatalf("error %v; want context.Canceled wrapping the 503", err)
			}
			if n := len(h.srv.Exchanges()); n != 1 {
				t.Errorf("%d requests; want 1", n)
			}
		})
	}
}

// A wait that would outlast the context's deadline is not begun.
func TestRetryWaitPastDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	h := newHarness(t, []scripted.Step{{Error: &scripted.Error{Status: 429, RetryAfter: "7200", Message: "later"}}, {Text: "late"}}, nil, func(o *openai.Options) {
		o.Retry.MaxWait = 3 * time.Hour
	})
	_, err := h.m.Generate(ctx, userRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "not retried: the context's deadline comes before the wait of 2h0m0s ends") || len(h.sleeps) != 0 {
		t.Fatalf("error %v after %d waits", err, len(h.sleeps))
	}
}

// The captured bodies are the bytes the server received, one per attempt.
func TestCaptureIsWhatWasSent(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Error: &scripted.Error{Status: 500, Message: "x"}}, {Text: "ok"}}, nil, nil)
			req := &model.Request{Messages: userRequest("Grüße <b>&</b> \u2028 \"q\"").Messages, Tools: []assembly.ToolSpec{weatherTool()}, CacheKey: "session-1"}
			if _, err := mode.call(context.Background(), h.m, req); err != nil {
				t.Fatal(err)
			}
			ex := h.srv.Exchanges()
			if len(h.captured) != 2 || len(ex) != 2 {
				t.Fatalf("%d captured, %d received; want 2 each", len(h.captured), len(ex))
			}
			for i, c := range h.captured {
				if c.attempt != i+1 {
					t.Errorf("capture %d has attempt %d", i, c.attempt)
				}
				if string(c.body) != string(ex[i].Body) {
					t.Errorf("capture %d differs from what the server received:\n%s\n%s", i, c.body, ex[i].Body)
				}
			}
			if mode.name == "stream" && !strings.Contains(string(h.captured[0].body), `"stream":true`) {
				t.Errorf("the captured streaming body lacks stream:true: %s", h.captured[0].body)
			}
		})
	}
}

// RequestBody builds, without sending, the bytes the server receives for
// the same request, whole or streamed, with every option that changes the
// body.
func TestRequestBodyIsWhatIsSent(t *testing.T) {
	temp, maxTok := 0.5, 64
	req := &model.Request{
		Messages: []assembly.Message{
			{Role: "system", Content: "Grüße <b>&</b> \u2028"},
			{Role: "user", Content: "weather?"},
			{Role: "assistant", ToolCalls: []assembly.ToolCall{{ID: "call_9", Type: "function", Function: assembly.FunctionCall{Name: "weather", Arguments: `{"city":"Oslo"}`}}}},
			{Role: "tool", ToolCallID: "call_9", Content: "sunny"},
		},
		Tools:    []assembly.ToolSpec{weatherTool()},
		CacheKey: "s-1", Temperature: &temp, MaxTokens: &maxTok,
	}
	for _, tc := range []struct {
		name string
		edit func(*openai.Options)
	}{
		{"defaults", nil},
		{"legacy and extra fields", func(o *openai.Options) {
			o.LegacyMaxTokens = true
			o.ExtraBody = map[string]any{"cache_prompt": true, "chat_template_kwargs": map[string]bool{"enable_thinking": false}}
		}},
	} {
		for _, mode := range modes {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Text: "ok"}}, nil, tc.edit)
				built, err := h.m.RequestBody(req, mode.name == "stream")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := mode.call(context.Background(), h.m, req); err != nil {
					t.Fatal(err)
				}
				if got := h.srv.Exchanges()[0].Body; string(built) != string(got) {
					t.Errorf("RequestBody differs from the body the server received:\nbuilt %s\nsent  %s", built, got)
				}
			})
		}
	}
	m, err := openai.New(&openai.Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.RequestBody(&model.Request{Messages: []assembly.Message{{Role: "robot"}}}, false); err == nil || !strings.Contains(err.Error(), `role "robot"`) {
		t.Errorf("a request that cannot be sent: %v; want the conversion's error", err)
	}
}

// The request options reach the wire as the protocol names them.
func TestRequestOnTheWire(t *testing.T) {
	temp, maxTok := 0.25, 300
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"answer": {Type: "string"}, "n": {Type: "integer", Enum: []any{json.Number("9007199254740993")}}}, Required: []string{"answer"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	req := &model.Request{
		Messages: []assembly.Message{
			{Role: "system", Content: "sys"},
			{Role: "user", Content: "weather?"},
			{Role: "assistant", ToolCalls: []assembly.ToolCall{{ID: "call_9", Type: "function", Function: assembly.FunctionCall{Name: "weather", Arguments: `{"city":"Oslo"}`}}}},
			{Role: "tool", ToolCallID: "call_9", Content: "sunny"},
		},
		Tools:    []assembly.ToolSpec{weatherTool()},
		Output:   &model.OutputSchema{Name: "answer", Description: "The final answer.", Schema: schema, Strict: true},
		CacheKey: "s-42", Temperature: &temp, MaxTokens: &maxTok,
	}
	tests := []struct {
		name   string
		edit   func(*openai.Options)
		stream bool
		want   map[string]string // top-level field → its JSON
		absent []string
	}{{
		name: "generate",
		want: map[string]string{
			"model":                 `"test-model"`,
			"prompt_cache_key":      `"s-42"`,
			"temperature":           `0.25`,
			"max_completion_tokens": `300`,
			"response_format":       `{"json_schema":{"name":"answer","strict":true,"description":"The final answer.","schema":{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer","enum":[9007199254740993]}},"required":["answer"],"additionalProperties":false}},"type":"json_schema"}`,
			"messages":              `[{"content":"sys","role":"system"},{"content":"weather?","role":"user"},{"tool_calls":[{"id":"call_9","function":{"arguments":"{\"city\":\"Oslo\"}","name":"weather"},"type":"function"}],"role":"assistant"},{"content":"sunny","tool_call_id":"call_9","role":"tool"}]`,
			"tools":                 `[{"function":{"name":"weather","description":"The weather in a city.","parameters":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}},"type":"function"}]`,
		},
		absent: []string{"stream", "stream_options", "max_tokens"},
	}, {
		name:   "stream with usage",
		stream: true,
		want:   map[string]string{"stream": `true`, "stream_options": `{"include_usage":true}`},
	}, {
		name: "legacy max_tokens and extra fields",
		edit: func(o *openai.Options) {
			o.LegacyMaxTokens = true
			o.ExtraBody = map[string]any{"chat_template_kwargs": map[string]bool{"enable_thinking": false}, "cache_prompt": true}
		},
		want:   map[string]string{"max_tokens": `300`, "chat_template_kwargs": `{"enable_thinking":false}`, "cache_prompt": `true`},
		absent: []string{"max_completion_tokens"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Expect: &scripted.Expect{Output: "answer", CacheKey: "s-42", ToolResults: []string{"call_9"}}, Text: `{"answer":"sunny"}`}}, nil, tt.edit)
			var err error
			if tt.stream {
				_, err = model.Collect(h.m.Stream(context.Background(), req))
			} else {
				_, err = h.m.Generate(context.Background(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(h.srv.Exchanges()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if got := string(body[k]); got != want {
					t.Errorf("%s:\n got %s\nwant %s", k, got, want)
				}
			}
			for _, k := range tt.absent {
				if v, ok := body[k]; ok {
					t.Errorf("%s is sent (%s); want it absent", k, v)
				}
			}
			got := h.srv.Exchanges()[0].Request.Output
			if got == nil || got.Name != "answer" || !got.Strict || got.Schema.Properties["answer"] == nil {
				t.Errorf("the server read the output schema as %+v", got)
			}
		})
	}
}

func TestAPIKey(t *testing.T) {
	tests := []struct {
		name, key, serverKey string
		wantAuth             string
		wantStatus           int
	}{
		{name: "no key sends no header", wantAuth: ""},
		{name: "a key is a bearer token", key: "sk-test", serverKey: "sk-test", wantAuth: "Bearer sk-test"},
		{name: "a wrong key is refused", key: "sk-wrong", serverKey: "sk-test", wantAuth: "Bearer sk-wrong", wantStatus: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(openai.EnvAPIKey, "sk-from-the-environment") // never read by New
			h := newHarness(t, []scripted.Step{{Text: "ok"}}, &openaitest.Options{APIKey: tt.serverKey}, func(o *openai.Options) { o.APIKey = tt.key })
			_, err := h.m.Generate(context.Background(), userRequest("hi"))
			if got := h.srv.Exchanges()[0].Header.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization %q; want %q", got, tt.wantAuth)
			}
			var ae *model.APIError
			switch {
			case tt.wantStatus == 0 && err != nil:
				t.Fatal(err)
			case tt.wantStatus != 0 && (!errors.As(err, &ae) || ae.Status != tt.wantStatus || !strings.Contains(err.Error(), "Incorrect API key")):
				t.Fatalf("error %v; want %d with the server's message", err, tt.wantStatus)
			}
		})
	}
}

func TestModelNotFound(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Text: "ok"}}, &openaitest.Options{Model: "served-model"}, nil)
	_, err := h.m.Generate(context.Background(), userRequest("hi"))
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Code != "model_not_found" || !strings.Contains(ae.Hint, "model name") {
		t.Fatalf("error %v; want a 404 model_not_found that says to check the model name", err)
	}
}

func TestServerDown(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Text: "ok"}}, nil, nil)
	base := h.srv.URL
	h.srv.Close()
	m, err := openai.New(&openai.Options{BaseURL: base, Model: "m", Retry: &openai.Retry{Sleep: func(context.Context, time.Duration) error {
		t.Error("a refused connection is retried")
		return nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), userRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "check the base URL") || !strings.Contains(err.Error(), base) {
		t.Fatalf("error %v; want one that names the URL and says to check it", err)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_API_KEY": "k", "SKILLKIT_MODEL": "qwen3"}
	got := openai.FromEnv(func(k string) string { return env[k] })
	want := &openai.Options{BaseURL: "http://localhost:11434/v1", APIKey: "k", Model: "qwen3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	t.Setenv("SKILLKIT_MODEL", "from-os")
	if o := openai.FromEnv(nil); o.Model != "from-os" {
		t.Errorf("FromEnv(nil).Model = %q; want the process environment's", o.Model)
	}
}

func TestNewChecksOptions(t *testing.T) {
	tests := []struct {
		name string
		opts *openai.Options
		want string
	}{
		{"nil", nil, "no model name: set Options.Model (or SKILLKIT_MODEL)"},
		{"no model", &openai.Options{BaseURL: "http://x/v1"}, "no model name"},
		{"not a URL", &openai.Options{Model: "m", BaseURL: "localhost:8000"}, `Options.BaseURL "localhost:8000" is not an http or https URL`},
		{"no host", &openai.Options{Model: "m", BaseURL: "http:///v1"}, "is not an http or https URL"},
		{"negative attempts", &openai.Options{Model: "m", Retry: &openai.Retry{MaxAttempts: -1}}, "Options.Retry.MaxAttempts is -1"},
		{"negative wait", &openai.Options{Model: "m", Retry: &openai.Retry{MaxWait: -time.Second}}, "Options.Retry.MaxWait is -1s"},
		{"extra key with a path", &openai.Options{Model: "m", ExtraBody: map[string]any{"a.b": 1}}, `ExtraBody key "a.b" is not a plain field name`},
		{"extra key the adapter writes", &openai.Options{Model: "m", ExtraBody: map[string]any{"messages": 1}}, `ExtraBody key "messages" is a field the adapter writes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openai.New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want one containing %q", err, tt.want)
			}
		})
	}
	m, err := openai.New(&openai.Options{Model: "gpt-x"})
	if err != nil || m.BaseURL() != openai.DefaultBaseURL || m.Name() != "gpt-x" {
		t.Fatalf("defaults: %v, %v", m, err)
	}
}

func TestRequestChecks(t *testing.T) {
	zero := 0
	tests := []struct {
		name string
		req  *model.Request
		want string
	}{
		{"unknown role", &model.Request{Messages: []assembly.Message{{Role: "robot"}}}, `Request.Messages[0] has role "robot"`},
		{"tool result without ID", &model.Request{Messages: []assembly.Message{{Role: "tool", Content: "x"}}}, "Request.Messages[0] is a tool result without the ID"},
		{"custom call", &model.Request{Messages: []assembly.Message{{Role: "assistant", ToolCalls: []assembly.ToolCall{{ID: "c", Type: "custom"}}}}}, `ToolCalls[0] has type "custom"`},
		{"custom tool", &model.Request{Tools: []assembly.ToolSpec{{Type: "custom", Function: assembly.FunctionSpec{Name: "t"}}}}, `Request.Tools[0] (t) has type "custom"`},
		{"output without schema", &model.Request{Output: &model.OutputSchema{Name: "x"}}, "Request.Output.Schema is nil"},
		{"output name", &model.Request{Output: &model.OutputSchema{Name: "final answer", Schema: &jsonschema.Schema{}}}, `Request.Output.Name "final answer" has ' '`},
		{"max tokens", &model.Request{MaxTokens: &zero}, "Request.MaxTokens is 0"},
	}
	h := newHarness(t, []scripted.Step{{Text: "never"}}, nil, nil)
	for _, tt := range tests {
		for _, mode := range modes {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				_, err := mode.call(context.Background(), h.m, tt.req)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v; want one containing %q", err, tt.want)
				}
			})
		}
	}
	if n := len(h.srv.Exchanges()); n != 0 {
		t.Errorf("%d requests sent; want none", n)
	}
}
