package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openai"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// waitGone fails the test unless the server saw request n's client close
// its connection. The bound only turns a leak into a failure instead of a
// hung test; a working adapter closes at once.
func waitGone(t *testing.T, h *harness, n int) {
	t.Helper()
	select {
	case <-h.srv.ClientGone(n):
	case <-time.After(10 * time.Second):
		t.Fatalf("the connection of request %d is still open", n)
	}
}

// noGoroutinesOfOurs fails when a goroutine runs code of package
// model/openai: the adapter starts none, so one that outlives a stream is
// a leak.
func noGoroutinesOfOurs(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "skillkit/model/openai.") {
			t.Errorf("a goroutine runs the adapter's code:\n%s", g)
		}
	}
}

func TestStreamCancelledMidway(t *testing.T) {
	for _, way := range []string{"cancel", "break"} {
		t.Run(way, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Text: "Let me think about this", Stall: true}}, nil, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var text string
			var errs []error
			values := 0
			for c, err := range h.m.Stream(ctx, userRequest("hard question")) {
				values++
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if c.Response != nil {
					t.Fatal("a stalled answer was finished")
				}
				text += c.Text
				if text == "Let " {
					if way == "break" {
						break
					}
					cancel()
				}
			}
			switch way {
			case "cancel":
				if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) || values != 2 {
					t.Fatalf("%d values, errors %v; want the first piece, then one error wrapping context.Canceled", values, errs)
				}
				if !strings.Contains(errs[0].Error(), "test-model") {
					t.Errorf("error %q does not name the model", errs[0])
				}
			case "break":
				if len(errs) != 0 || values != 1 {
					t.Fatalf("%d values, errors %v; want the loop to end where it broke", values, errs)
				}
			}
			waitGone(t, h, 1)
			noGoroutinesOfOurs(t)
		})
	}
}

func TestGenerateCancelled(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Text: "never sent", Stall: true}}, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.m.Generate(ctx, userRequest("hi"))
		done <- err
	}()
	// Cancel once the server holds the request (the step is stalled).
	for ex := h.srv.Exchanges(); len(ex) == 0 || ex[0].Step == 0; ex = h.srv.Exchanges() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v; want context.Canceled", err)
	}
	waitGone(t, h, 1)
	if n := len(h.sleeps); n != 0 {
		t.Errorf("%d retries after cancellation", n)
	}
}

// A model's answer goes into a conversation, whose next request carries
// the calls and their results with the provider's IDs back to the server.
func TestRoundTripThroughConversation(t *testing.T) {
	ctx := context.Background()
	type in struct {
		City string `json:"city"`
	}
	weather := tools.New("weather", "The weather in a city.", func(_ context.Context, _ tools.Call, a in) (tools.Result, error) {
		return tools.Result{Text: "sunny in " + a.City}, nil
	})
	store := session.NewMemoryStore(nil)
	s, err := store.Create(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := conversation.Open(ctx, store, s.ID, "main", &conversation.Options{System: "Be brief.", Tools: tools.Static{weather}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{
				{Expect: &scripted.Expect{Tools: []string{"weather"}, LastRole: "user", LastContains: "Oslo"},
					Calls: []scripted.Call{{ID: "call_p1" + mode.name, Name: "weather", Arguments: `{"city":"Oslo"}`}, {ID: "call_p2" + mode.name, Name: "weather", Arguments: `{"city":"Rome"}`}}},
				{Expect: &scripted.Expect{ToolResults: []string{"call_p1" + mode.name, "call_p2" + mode.name}, LastContains: "sunny in Rome"},
					Text: "Sunny in both."},
			}, nil, nil)
			if _, err := conv.User(ctx, "Weather in Oslo and Rome?"); err != nil {
				t.Fatal(err)
			}
			for step := 0; ; step++ {
				req, err := conv.Request(ctx)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := mode.call(ctx, h.m, &model.Request{Messages: req.Messages, Tools: req.Tools})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conv.Respond(ctx, resp.Assistant()); err != nil {
					t.Fatal(err)
				}
				if len(resp.Calls) == 0 {
					break
				}
			}
			if err := h.srv.Err(); err != nil {
				t.Fatal(err)
			}
			if err := h.srv.Done(); err != nil {
				t.Fatal(err)
			}
			body := string(h.srv.Exchanges()[1].Body)
			for _, want := range []string{`"id":"call_p1` + mode.name + `"`, `"tool_call_id":"call_p2` + mode.name + `"`} {
				if !strings.Contains(body, want) {
					t.Errorf("the second request lacks %s:\n%s", want, body)
				}
			}
		})
	}
}

// rawServer answers every request with the given status, content type and
// body, as servers other than openaitest write them.
func rawServer(t *testing.T, status int, contentType, body string) *openai.Model {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	m, err := openai.New(&openai.Options{BaseURL: srv.URL + "/v1", Model: "raw-model", Retry: &openai.Retry{
		MaxAttempts: 2,
		Sleep:       func(context.Context, time.Duration) error { return nil },
	}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "data: %s\n\n", e)
	}
	return b.String()
}

func TestStreamsOfOtherServers(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   *model.Response
		errHas string
		status int // of an expected *model.APIError
	}{{
		name: "every call numbered 0, told apart by ID",
		body: sse(
			`{"id":"x","model":"llama","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"n\":1}"}}]}}]}`,
			`{"id":"x","model":"llama","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}}]}`,
			`{"id":"x","model":"llama","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`),
		want: &model.Response{ID: "x", Model: "llama", FinishReason: model.FinishToolCalls,
			Calls: []session.ToolCall{{ID: "a", Name: "f", Arguments: `{"n":1}`}, {ID: "b", Name: "g", Arguments: `{}`}}},
	}, {
		name: "the name repeated on every piece",
		body: sse(
			`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"n\""}}]}}]}`,
			`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":":1}"}}]}}]}`,
			`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
		want: &model.Response{ID: "x", Model: "raw-model", FinishReason: model.FinishStop,
			Calls: []session.ToolCall{{ID: "a", Name: "f", Arguments: `{"n":1}`}}},
	}, {
		name: "usage on every chunk, DeepSeek's cache field",
		body: sse(
			`{"id":"d","choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11,"prompt_cache_hit_tokens":0}}`,
			`{"id":"d","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_cache_hit_tokens":8,"prompt_cache_miss_tokens":2}}`),
		want: &model.Response{ID: "d", Model: "raw-model", Text: "Hi!", FinishReason: model.FinishStop,
			Usage: model.Usage{PromptTokens: 10, CompletionTokens: 2, CachedPromptTokens: 8}},
	}, {
		name:   "a stream cut before the finish",
		body:   sse(`{"id":"x","choices":[{"index":0,"delta":{"content":"Hal"}}]}`),
		errHas: "the stream ended before the answer was finished",
	}, {
		name:   "an error event before any piece",
		body:   sse(`{"error":{"message":"The server is overloaded","type":"server_error","code":"503"}}`),
		errHas: "The server is overloaded (after 2 attempts)", status: 503,
	}, {
		name: "an error event after a piece",
		body: sse(`{"id":"x","choices":[{"index":0,"delta":{"content":"Hal"}}]}`,
			`{"error":{"message":"generation failed","type":"server_error"}}`),
		errHas: "failed: the server reported an error in its answer: generation failed",
	}, {
		name:   "nothing at all",
		body:   "",
		errHas: "the server ended the stream without sending anything",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := rawServer(t, 200, "text/event-stream", tt.body)
			got, err := model.Collect(m.Stream(context.Background(), userRequest("hi")))
			if tt.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("got  %+v\nwant %+v", got, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %v; want one saying %q", err, tt.errHas)
			}
			var ae *model.APIError
			if tt.status != 0 && (!errors.As(err, &ae) || ae.Status != tt.status) {
				t.Errorf("error %v; want a *model.APIError with status %d", err, tt.status)
			}
		})
	}
}

func TestAnswersOfOtherServers(t *testing.T) {
	tests := []struct {
		name, body, errHas string
		want               *model.Response
	}{{
		name: "content null with calls, no type on the call",
		body: `{"id":"c","model":"qwen","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"t1","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":4}}}`,
		want: &model.Response{ID: "c", Model: "qwen", FinishReason: model.FinishToolCalls, Calls: []session.ToolCall{{ID: "t1", Name: "f", Arguments: "{}"}},
			Usage: model.Usage{PromptTokens: 7, CompletionTokens: 3, CachedPromptTokens: 4}},
	}, {
		name: "a refusal",
		body: `{"id":"r","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
		want: &model.Response{ID: "r", Model: "raw-model", Refusal: "I can't help with that.", FinishReason: model.FinishStop},
	}, {
		name:   "an error with status 200",
		body:   `{"error":{"message":"model is loading","type":"unavailable"}}`,
		errHas: `(model "raw-model") failed: the server reported an error in its answer: model is loading`,
	}, {
		name:   "no choices",
		body:   `{"id":"e","choices":[]}`,
		errHas: "the server's answer has no choices",
	}, {
		name:   "not JSON",
		body:   `<html>`,
		errHas: `POST http://127.0.0.1:`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := rawServer(t, 200, "application/json", tt.body)
			got, err := m.Generate(context.Background(), userRequest("hi"))
			if tt.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("got  %+v\nwant %+v", got, tt.want)
				}
				if tt.want.Refusal != "" && got.Assistant().Text != tt.want.Refusal {
					t.Errorf("Assistant().Text = %q; want the refusal", got.Assistant().Text)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %v; want one saying %q", err, tt.errHas)
			}
		})
	}
}
