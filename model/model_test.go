package model_test

import (
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/session"
)

func TestSchemaName(t *testing.T) {
	s := &jsonschema.Schema{Type: "object"}
	tests := []struct {
		name string
		out  model.OutputSchema
		want string
		err  string
	}{
		{name: "default", out: model.OutputSchema{Schema: s}, want: "output"},
		{name: "given", out: model.OutputSchema{Name: "final_answer-2", Schema: s}, want: "final_answer-2"},
		{name: "64 bytes", out: model.OutputSchema{Name: strings.Repeat("a", 64), Schema: s}, want: strings.Repeat("a", 64)},
		{name: "65 bytes", out: model.OutputSchema{Name: strings.Repeat("a", 65), Schema: s}, err: "is 65 bytes; at most 64"},
		{name: "a dot", out: model.OutputSchema{Name: "a.b", Schema: s}, err: `Request.Output.Name "a.b" has '.'`},
		{name: "no schema", out: model.OutputSchema{Name: "x"}, err: "Request.Output.Schema is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.out.SchemaName()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("SchemaName() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestUsageAdd(t *testing.T) {
	got := model.Usage{PromptTokens: 10, CompletionTokens: 2, CachedPromptTokens: 8}.Add(model.Usage{PromptTokens: 5, CompletionTokens: 1})
	if want := (model.Usage{PromptTokens: 15, CompletionTokens: 3, CachedPromptTokens: 8}); got != want {
		t.Errorf("got %+v; want %+v", got, want)
	}
}

func TestAssistant(t *testing.T) {
	calls := []session.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}
	tests := []struct {
		name string
		resp model.Response
		want conversation.Assistant
	}{
		{"text and calls", model.Response{Text: "On it.", Calls: calls}, conversation.Assistant{Text: "On it.", Calls: calls}},
		{"a refusal stands in for no text", model.Response{Refusal: "No."}, conversation.Assistant{Text: "No."}},
		{"text wins over a refusal", model.Response{Text: "{}", Refusal: "No."}, conversation.Assistant{Text: "{}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.resp.Assistant()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(got.Calls) > 0 {
				got.Calls[0].ID = "changed"
				if tt.resp.Calls[0].ID == "changed" {
					t.Error("the answer shares its calls with the response")
				}
			}
		})
	}
}

func stream(chunks []model.Chunk, err error) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for _, c := range chunks {
			if !yield(c, nil) {
				return
			}
		}
		if err != nil {
			yield(model.Chunk{}, err)
		}
	}
}

func TestCollect(t *testing.T) {
	final := &model.Response{Text: "ab"}
	if got, err := model.Collect(stream([]model.Chunk{{Text: "a"}, {Text: "b"}, {Response: final}}, nil)); err != nil || got != final {
		t.Errorf("Collect = %v, %v; want the last chunk's response", got, err)
	}
	boom := errors.New("boom")
	if _, err := model.Collect(stream([]model.Chunk{{Text: "a"}}, boom)); !errors.Is(err, boom) {
		t.Errorf("Collect error %v; want the stream's", err)
	}
	if _, err := model.Collect(stream([]model.Chunk{{Text: "a"}}, nil)); err == nil || !strings.Contains(err.Error(), "without a response") {
		t.Errorf("Collect of a stream without a response: %v", err)
	}
}

func TestAPIErrorText(t *testing.T) {
	tests := []struct {
		err  model.APIError
		want string
	}{
		{model.APIError{Status: 401, Message: "Incorrect API key", URL: "https://api.openai.com/v1/chat/completions", Model: "gpt-x", Attempts: 1, Hint: "check the API key"},
			`model: POST https://api.openai.com/v1/chat/completions (model "gpt-x") failed: 401 Unauthorized: Incorrect API key; check the API key`},
		{model.APIError{Status: 503, URL: "http://h/v1/chat/completions", Attempts: 4, Retryable: true, RetryAfter: time.Second},
			`model: POST http://h/v1/chat/completions failed: 503 Service Unavailable (after 4 attempts)`},
		{model.APIError{Message: "generation failed", Model: "m"},
			`model: (model "m") failed: the server reported an error in its answer: generation failed`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}
