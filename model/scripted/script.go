// Package scripted is a model that replays a script: a JSON list of the
// answers a model would give (text, tool calls with their IDs, usage), each
// optionally with expectations on the request it answers (the tools
// offered, the last message, the results of earlier calls). It is for
// tests, examples and reproducible benchmarks — it never looks at what the
// request asks, only checks it against the script — and it says so in
// every error and in the model name of its responses.
//
// A script file:
//
//	{"steps": [
//	  {"expect": {"tools_include": ["skill"], "last_role": "user"},
//	   "calls": [{"id": "call_1", "name": "skill", "arguments": {"name": "csv-stats"}}],
//	   "usage": {"prompt_tokens": 900, "completion_tokens": 12}},
//	  {"expect": {"tool_results": ["call_1"]},
//	   "text": "The sample has 3 rows."}
//	]}
//
// A step can also fail the way a provider does (an HTTP status with a
// message and Retry-After, a dropped connection) or stall after its text
// until the caller gives up, so error handling and cancellation can be
// scripted too. Package model/openaitest plays the same scripts over HTTP.
package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/session"
)

// Script is the list of answers to replay, one step per request.
type Script struct {
	// Steps are played in order, one per request.
	Steps []Step `json:"steps"`
}

// Step is one scripted answer, or one scripted failure.
type Step struct {
	// Expect, when set, is checked against the request before the step
	// is played; a request that does not match is an error.
	Expect *Expect `json:"expect,omitempty"`
	// Text is the answer's text.
	Text string `json:"text,omitempty"`
	// Calls are the answer's tool calls.
	Calls []Call `json:"calls,omitempty"`
	// FinishReason is sent as given; empty means "tool_calls" for an
	// answer with calls and "stop" otherwise.
	FinishReason model.FinishReason `json:"finish_reason,omitempty"`
	// Usage is the token accounting reported; nil reports zeros (the
	// openaitest server computes it instead).
	Usage *model.Usage `json:"usage,omitempty"`
	// Error makes the step fail as a provider refusing the request.
	Error *Error `json:"error,omitempty"`
	// Disconnect makes the step fail as a connection the provider
	// dropped without answering.
	Disconnect bool `json:"disconnect,omitempty"`
	// Stall makes the step send its text (streaming) and then wait until
	// the caller gives up, without finishing the answer.
	Stall bool `json:"stall,omitempty"`
}

// Call is a scripted tool call.
type Call struct {
	// ID is the provider's call ID; empty sends none.
	ID string `json:"id,omitempty"`
	// Name is the tool's name; required.
	Name string `json:"name"`
	// Arguments is the argument text.
	Arguments Arguments `json:"arguments,omitempty"`
}

// Arguments is a call's argument text. In a script it is written either as
// a JSON string, taken as the exact text (so a script can send malformed
// arguments), or as any other JSON value, sent compacted.
type Arguments string

// UnmarshalJSON reads a string as the text itself and any other value as
// its compacted JSON.
func (a *Arguments) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = Arguments(s)
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*a = Arguments(buf.String())
	return nil
}

// MarshalJSON writes a JSON object or array as itself and anything else
// as a string.
func (a Arguments) MarshalJSON() ([]byte, error) {
	s := strings.TrimSpace(string(a))
	if (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) && json.Valid([]byte(s)) {
		return []byte(s), nil
	}
	return json.Marshal(string(a))
}

// Error is a scripted provider failure.
type Error struct {
	// Status is the HTTP status, 400 to 599.
	Status int `json:"status"`
	// Message is the provider's error message.
	Message string `json:"message,omitempty"`
	// Type is the provider's error type.
	Type string `json:"type,omitempty"`
	// Code is the provider's error code.
	Code string `json:"code,omitempty"`
	// RetryAfter is the Retry-After header as sent: seconds or an HTTP
	// date.
	RetryAfter string `json:"retry_after,omitempty"`
	// Body, when set, is sent by the openaitest server as the whole
	// response body (text/plain) instead of the JSON error object, as a
	// proxy in front of a provider might.
	Body string `json:"body,omitempty"`
}

// Expect is what a step expects of the request it answers. Unset fields
// are not checked.
type Expect struct {
	// Tools are the names of exactly the tools offered, in any order; an
	// empty list expects none.
	Tools []string `json:"tools,omitempty"`
	// ToolsInclude are names that must be among the tools offered.
	ToolsInclude []string `json:"tools_include,omitempty"`
	// ToolsExclude are names that must not be among the tools offered.
	ToolsExclude []string `json:"tools_exclude,omitempty"`
	// LastRole is the role of the last message.
	LastRole string `json:"last_role,omitempty"`
	// LastContains must occur in the last message's content.
	LastContains string `json:"last_contains,omitempty"`
	// Contains must each occur in some message's content.
	Contains []string `json:"contains,omitempty"`
	// Lacks must each occur in no message's content: what the request
	// must not show (another agent's skill, say).
	Lacks []string `json:"lacks,omitempty"`
	// ToolResults are the call IDs the trailing tool messages answer, in
	// order: the calls of the previous answer, round-tripped.
	ToolResults []string `json:"tool_results,omitempty"`
	// Output is the name of the output schema the request must ask for.
	Output string `json:"output,omitempty"`
	// CacheKey is the prompt-cache key the request must carry.
	CacheKey string `json:"cache_key,omitempty"`
}

// Parse reads a script; name (a file name, say) labels its errors. Unknown
// fields are errors, so a misspelt expectation is never silently skipped.
func Parse(data []byte, name string) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scripted model: %s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("scripted model: %s: more than one JSON value; a script is one object {\"steps\": [...]}", name)
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("scripted model: %s: %w", name, err)
	}
	return &s, nil
}

// ReadFile reads and parses the script file at path.
func ReadFile(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	return Parse(data, path)
}

// Check reports the first step that cannot be played: no steps, a step
// that both fails and answers, a call without a name, an error status
// outside 400–599.
func (s *Script) Check() error {
	if len(s.Steps) == 0 {
		return errors.New("the script has no steps")
	}
	for i, st := range s.Steps {
		failures := 0
		if st.Error != nil {
			failures++
		}
		if st.Disconnect {
			failures++
		}
		answers := st.Text != "" || len(st.Calls) > 0 || st.FinishReason != "" || st.Usage != nil
		switch {
		case failures > 1:
			return fmt.Errorf("steps[%d] has both error and disconnect; a step fails one way", i)
		case failures == 1 && (answers || st.Stall):
			return fmt.Errorf("steps[%d] both fails and answers; put the answer in a step of its own", i)
		case st.Error != nil && (st.Error.Status < 400 || st.Error.Status > 599):
			return fmt.Errorf("steps[%d].error.status is %d; want an HTTP error status, 400 to 599", i, st.Error.Status)
		}
		for j, c := range st.Calls {
			if c.Name == "" {
				return fmt.Errorf("steps[%d].calls[%d] has no name", i, j)
			}
		}
	}
	return nil
}

// Response is the answer the step scripts (nil for a failing step).
func (st *Step) Response(modelName string) *model.Response {
	if st.Error != nil || st.Disconnect {
		return nil
	}
	r := &model.Response{Text: st.Text, FinishReason: st.FinishReason, Model: modelName}
	for _, c := range st.Calls {
		r.Calls = append(r.Calls, session.ToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)})
	}
	if r.FinishReason == "" {
		r.FinishReason = model.FinishStop
		if len(r.Calls) > 0 {
			r.FinishReason = model.FinishToolCalls
		}
	}
	if st.Usage != nil {
		r.Usage = *st.Usage
	}
	return r
}

// Check reports the first way req differs from the expectations, or nil.
func (e *Expect) Check(req *model.Request) error {
	if e == nil {
		return nil
	}
	offered := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		offered[i] = t.Function.Name
	}
	if e.Tools != nil {
		got, want := slices.Sorted(slices.Values(offered)), slices.Sorted(slices.Values(e.Tools))
		if !slices.Equal(got, want) {
			return fmt.Errorf("expected the tools %q, the request offers %q", want, got)
		}
	}
	for _, n := range e.ToolsInclude {
		if !slices.Contains(offered, n) {
			return fmt.Errorf("expected the tool %q among the tools offered, %q", n, offered)
		}
	}
	for _, n := range e.ToolsExclude {
		if slices.Contains(offered, n) {
			return fmt.Errorf("expected no tool %q, the request offers it", n)
		}
	}
	if e.LastRole != "" || e.LastContains != "" {
		if len(req.Messages) == 0 {
			return errors.New("expected a last message, the request has none")
		}
		last := req.Messages[len(req.Messages)-1]
		if e.LastRole != "" && last.Role != e.LastRole {
			return fmt.Errorf("expected the last message's role %q, it is %q", e.LastRole, last.Role)
		}
		if !strings.Contains(last.Content, e.LastContains) {
			return fmt.Errorf("expected the last message to contain %q, it is %q", e.LastContains, last.Content)
		}
	}
	for _, want := range e.Contains {
		if !slices.ContainsFunc(req.Messages, func(m assembly.Message) bool { return strings.Contains(m.Content, want) }) {
			return fmt.Errorf("expected a message containing %q, none does", want)
		}
	}
	for _, never := range e.Lacks {
		if i := slices.IndexFunc(req.Messages, func(m assembly.Message) bool { return strings.Contains(m.Content, never) }); i >= 0 {
			return fmt.Errorf("expected no message containing %q, message %d (%s) does", never, i+1, req.Messages[i].Role)
		}
	}
	if e.ToolResults != nil {
		var ids []string
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
			ids = append(ids, req.Messages[i].ToolCallID)
		}
		slices.Reverse(ids)
		if !slices.Equal(ids, e.ToolResults) {
			return fmt.Errorf("expected the trailing tool results to answer %q, they answer %q", e.ToolResults, ids)
		}
	}
	if e.Output != "" {
		var got string
		if req.Output != nil {
			got, _ = req.Output.SchemaName()
		}
		if got != e.Output {
			return fmt.Errorf("expected the output schema %q, the request asks for %q", e.Output, got)
		}
	}
	if e.CacheKey != "" && req.CacheKey != e.CacheKey {
		return fmt.Errorf("expected the cache key %q, the request has %q", e.CacheKey, req.CacheKey)
	}
	return nil
}
