// Package model is what an agent needs of a language model: a Request
// (the messages and tools that package assembly builds, plus options such
// as an output schema and a prompt-cache key) goes in, a Response (text,
// tool calls with the provider's IDs, finish reason, token usage with the
// cached prompt tokens) comes out, either whole (Generate) or as a stream
// of chunks (Stream, an iterator that ends with the whole Response).
//
// Adapters live in subpackages: model/openai speaks the Chat Completions
// protocol of OpenAI and the servers compatible with it (vLLM, llama.cpp,
// Ollama, DeepSeek); model/scripted replays a JSON script, for tests,
// examples and reproducible benchmarks; model/openaitest is a Chat
// Completions server on 127.0.0.1 that plays such a script over HTTP.
//
// A Response becomes the answer a conversation records with
// Response.Assistant, so one model step of an agent is
//
//	req, _ := conv.Request(ctx)
//	resp, err := m.Generate(ctx, &model.Request{Messages: req.Messages, Tools: req.Tools})
//	step, err := conv.Respond(ctx, resp.Assistant())
package model

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/session"
)

// Model generates the answer to a request. Implementations are safe for
// concurrent use.
type Model interface {
	// Generate sends the request and returns the whole answer. It stops
	// when ctx ends, with an error that wraps ctx.Err().
	Generate(ctx context.Context, req *Request) (*Response, error)
	// Stream sends the request and yields the answer as it arrives: text
	// and tool-call pieces, then one last chunk that carries the whole
	// Response (usage included). A failure is yielded as the last value,
	// with a zero Chunk; when ctx ends mid-stream that error wraps
	// ctx.Err(). Stopping the loop early releases the connection. Each
	// range over the sequence sends the request anew.
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// Request is one model request: the messages and tools in the shape
// package assembly builds them (conversation.Request returns them), and
// the options of this request.
type Request struct {
	// Messages are the conversation so far, in Chat Completions roles:
	// system, developer, user, assistant (with its tool calls) and tool
	// (a result, with the ID of the call it answers).
	Messages []assembly.Message
	// Tools are the tools the model may call, each with its JSON schema.
	Tools []assembly.ToolSpec
	// Output, when set, asks for a final answer that is one JSON value
	// valid against its schema (structured output).
	Output *OutputSchema
	// CacheKey is sent as the provider's prompt-cache key (OpenAI's
	// prompt_cache_key), grouping requests that share a prefix, such as
	// the steps of one session. Empty sends none.
	CacheKey string
	// Temperature is the sampling temperature; nil leaves it to the
	// provider.
	Temperature *float64
	// MaxTokens bounds the tokens of the answer; nil leaves it to the
	// provider.
	MaxTokens *int
}

// OutputSchema is the JSON schema a final answer must satisfy.
type OutputSchema struct {
	// Name names the schema to the provider: 1 to 64 letters, digits,
	// '_' or '-'. Empty means "output".
	Name string
	// Description tells the model what the answer is for; optional.
	Description string
	// Schema is the JSON schema of the answer; required.
	Schema *jsonschema.Schema
	// Strict asks the provider to enforce the schema exactly (OpenAI's
	// strict mode, which wants every property required and no
	// additional properties).
	Strict bool
}

// DefaultOutputName is the name an OutputSchema without one is sent with.
const DefaultOutputName = "output"

// SchemaName returns the name the schema is sent with, after checking it:
// Name, or DefaultOutputName when that is empty.
func (o *OutputSchema) SchemaName() (string, error) {
	if o.Schema == nil {
		return "", errors.New("model: Request.Output.Schema is nil; give the JSON schema of the final answer")
	}
	if o.Name == "" {
		return DefaultOutputName, nil
	}
	if len(o.Name) > 64 {
		return "", fmt.Errorf("model: Request.Output.Name %q is %d bytes; at most 64 letters, digits, '_' or '-'", o.Name, len(o.Name))
	}
	for _, c := range []byte(o.Name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return "", fmt.Errorf("model: Request.Output.Name %q has %q; use only letters, digits, '_' or '-'", o.Name, c)
		}
	}
	return o.Name, nil
}

// FinishReason says why the model stopped, as the provider named it.
// Providers differ (some say "stop" when they call tools), so decide by
// Response.Calls whether the answer calls tools.
type FinishReason string

// The finish reasons of the Chat Completions protocol. Others are kept as
// the provider sent them.
const (
	// FinishStop: the answer is complete.
	FinishStop FinishReason = "stop"
	// FinishToolCalls: the answer ends with tool calls.
	FinishToolCalls FinishReason = "tool_calls"
	// FinishLength: the answer was cut at the token limit.
	FinishLength FinishReason = "length"
	// FinishContentFilter: the provider's filter withheld content.
	FinishContentFilter FinishReason = "content_filter"
)

// Response is one answer of the model.
type Response struct {
	// Text is the answer's text; it may be empty when the answer only
	// calls tools. With Request.Output set it is the JSON answer.
	Text string
	// Refusal is the provider's refusal message, when it refused to
	// answer in the requested format (OpenAI's structured outputs).
	Refusal string
	// Calls are the tool calls, in order, each with the provider's ID and
	// the arguments exactly as the model wrote them.
	Calls []session.ToolCall
	// FinishReason is why the model stopped.
	FinishReason FinishReason
	// Usage is the token accounting the provider reported.
	Usage Usage
	// ID is the provider's identifier of the answer, if it gave one.
	ID string
	// Model is the model that answered, as the provider names it.
	Model string
}

// Assistant is the answer as a conversation records it: the text and the
// calls with their IDs. A refusal stands in for the text when the answer
// has none, so the session keeps what the model said.
func (r *Response) Assistant() conversation.Assistant {
	text := r.Text
	if text == "" {
		text = r.Refusal
	}
	return conversation.Assistant{Text: text, Calls: slices.Clone(r.Calls)}
}

// Usage is the token accounting of one or more requests.
type Usage struct {
	// PromptTokens are the tokens of the request, cached ones included.
	PromptTokens int `json:"prompt_tokens"`
	// CompletionTokens are the tokens of the answer.
	CompletionTokens int `json:"completion_tokens"`
	// CachedPromptTokens are the part of PromptTokens the provider read
	// from its prompt cache (usage.prompt_tokens_details.cached_tokens).
	CachedPromptTokens int `json:"cached_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:       u.PromptTokens + v.PromptTokens,
		CompletionTokens:   u.CompletionTokens + v.CompletionTokens,
		CachedPromptTokens: u.CachedPromptTokens + v.CachedPromptTokens,
	}
}

// Chunk is one piece of a streamed answer: text, a piece of a tool call,
// or, last, the whole Response.
type Chunk struct {
	// Text is the next piece of the answer's text.
	Text string
	// Call is the next piece of a tool call, or nil.
	Call *CallDelta
	// Response is set on the last chunk only: the whole answer, assembled
	// from the pieces, with the finish reason and usage.
	Response *Response
}

// CallDelta is a piece of a tool call as it streams. The ID and name come
// with a call's first piece; its arguments arrive in pieces to append.
type CallDelta struct {
	// Index is the call's position in Response.Calls.
	Index int
	// ID is the provider's call ID, on the call's first piece.
	ID string
	// Name is the tool's name, on the call's first piece.
	Name string
	// Arguments is the next piece of the argument text.
	Arguments string
}

// Collect drains a stream and returns the Response of its last chunk, or
// the stream's error. A stream that ends without a Response is an error.
func Collect(stream iter.Seq2[Chunk, error]) (*Response, error) {
	var resp *Response
	for c, err := range stream {
		if err != nil {
			return nil, err
		}
		if c.Response != nil {
			resp = c.Response
		}
	}
	if resp == nil {
		return nil, errors.New("model: the stream ended without a response")
	}
	return resp, nil
}
