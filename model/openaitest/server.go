// Package openaitest is an OpenAI-compatible Chat Completions server on
// 127.0.0.1 that plays a script of package model/scripted, for tests of
// anything that talks to a model over HTTP: the model/openai adapter, an
// agent runner, a CLI. It answers POST /v1/chat/completions as a provider
// does — whole answers and SSE streams (with include_usage), tool calls
// with the script's IDs, error statuses with Retry-After, dropped
// connections, streams that stall until the client gives up — and records
// every request body exactly as received.
//
// Usage is the script's where a step gives it; otherwise the server
// computes it the way a provider's prompt cache would: the prompt is the
// request body (or what Options.Prompt renders from it, such as
// TemplatePrompt), and its cached part is the longest common prefix with
// the previous request's prompt, both counted by Options.Tokens.
package openaitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
)

// Path is where the server answers.
const Path = "/v1/chat/completions"

// Options configures a server. Nil means defaults.
type Options struct {
	// Tokens counts the tokens of a piece of a request body or of an
	// answer, for the usage the server computes; nil counts one token per
	// byte.
	Tokens func([]byte) int
	// APIKey, when set, is the bearer token every request must carry;
	// others get 401.
	APIKey string
	// Model, when set, is the only model name served; requests naming
	// another get 404 with code model_not_found.
	Model string
	// Prompt, when set, renders the prompt the computed usage counts
	// from a request body, in place of the body itself: the text a
	// provider puts before the model, whose prefix its cache serves.
	// Nil counts the body as received; since a Chat Completions body
	// lists the tools after the messages, the prefix it shares with the
	// next body ends at the first new message. TemplatePrompt is the
	// usual rendering.
	Prompt func(body []byte) ([]byte, error)
}

// TemplatePrompt renders a request body as chat templates order a
// prompt: the tools first, then the messages, each as the body holds it
// (its JSON, byte for byte) on a line of its own. A request with the same
// tools whose messages extend the previous request's has the previous
// prompt as its prefix.
func TemplatePrompt(body []byte) ([]byte, error) {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("openaitest: the body is not a Chat Completions request: %w", err)
	}
	var out []byte
	for _, part := range append(req.Tools, req.Messages...) {
		out = append(append(out, part...), '\n')
	}
	return out, nil
}

// Exchange is one request the server received and what it answered.
type Exchange struct {
	// Step is the script step that answered (1 for the first), 0 when
	// the request was refused before a step was taken.
	Step int
	// Body is the request body exactly as received.
	Body []byte
	// Header is the request's header.
	Header http.Header
	// Request is the body as read back into a model request.
	Request *model.Request
	// Model is the model the request named.
	Model string
	// Stream reports whether the request asked for a stream.
	Stream bool
	// IncludeUsage reports whether it asked for usage in the stream.
	IncludeUsage bool
	// Usage is the usage the server reported.
	Usage model.Usage
}

// Server is a running Chat Completions server. Close it when done.
type Server struct {
	// URL is the base URL to give a client: http://127.0.0.1:PORT/v1.
	URL string

	srv     *httptest.Server
	script  *scripted.Model
	opts    Options
	closing chan struct{}

	mu    sync.Mutex
	log   []Exchange
	prev  []byte // the previous request's prompt
	errs  []error
	gone  map[int]chan struct{} // by request number
	close sync.Once
}

// New starts a server that plays s.
func New(s *scripted.Script, opts *Options) (*Server, error) {
	m, err := scripted.New(s, &scripted.Options{Label: "openaitest"})
	if err != nil {
		return nil, err
	}
	srv := &Server{script: m, closing: make(chan struct{}), gone: map[int]chan struct{}{}}
	if opts != nil {
		srv.opts = *opts
	}
	if srv.opts.Tokens == nil {
		srv.opts.Tokens = func(b []byte) int { return len(b) }
	}
	srv.srv = httptest.NewServer(http.HandlerFunc(srv.serve))
	srv.URL = srv.srv.URL + "/v1"
	return srv, nil
}

// Close ends stalled answers and shuts the server down.
func (s *Server) Close() {
	s.close.Do(func() { close(s.closing) })
	s.srv.Close()
}

// Exchanges returns the requests received so far, in order.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.log...)
}

// Err reports the requests the server refused because they broke the
// script or the protocol (answered with 400, which clients do not retry),
// joined; nil when there were none.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// Done reports an error when steps of the script were not played.
func (s *Server) Done() error { return s.script.Done() }

// ClientGone returns a channel closed when the client of request n (1 for
// the first) closed its connection while a stalled step waited for it.
func (s *Server) ClientGone(n int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.goneLocked(n)
}

func (s *Server) goneLocked(n int) chan struct{} {
	c, ok := s.gone[n]
	if !ok {
		c = make(chan struct{})
		s.gone[n] = c
	}
	return c
}

// wire is the part of a Chat Completions request the server reads.
type wire struct {
	Model         string              `json:"model"`
	Messages      []assembly.Message  `json:"messages"`
	Tools         []assembly.ToolSpec `json:"tools"`
	Stream        bool                `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name        string             `json:"name"`
			Description string             `json:"description"`
			Schema      *jsonschema.Schema `json:"schema"`
			Strict      bool               `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	PromptCacheKey      string   `json:"prompt_cache_key"`
	Temperature         *float64 `json:"temperature"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	MaxTokens           *int     `json:"max_tokens"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	prompt := body
	if s.opts.Prompt != nil {
		// A body Prompt cannot read is refused below, as not a request.
		if p, err := s.opts.Prompt(body); err == nil {
			prompt = p
		}
	}
	s.mu.Lock()
	n := len(s.log) + 1
	s.log = append(s.log, Exchange{Body: body, Header: r.Header.Clone()})
	prev := s.prev
	s.prev = prompt
	s.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != Path {
		s.refuse(w, n, http.StatusNotFound, "", fmt.Errorf("openaitest: no route %s %s; the API is at POST %s", r.Method, r.URL.Path, Path))
		return
	}
	if s.opts.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.APIKey {
		s.refuse(w, n, http.StatusUnauthorized, "invalid_api_key", errors.New("Incorrect API key provided."))
		return
	}
	var in wire
	if err := json.Unmarshal(body, &in); err != nil {
		s.refuse(w, n, http.StatusBadRequest, "", fmt.Errorf("openaitest: request %d: the body is not a Chat Completions request: %w", n, err))
		return
	}
	req := in.request()
	s.update(n, func(e *Exchange) {
		e.Request, e.Model, e.Stream = req, in.Model, in.Stream
		e.IncludeUsage = in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	})
	if s.opts.Model != "" && in.Model != s.opts.Model {
		s.refuse(w, n, http.StatusNotFound, "model_not_found", fmt.Errorf("The model `%s` does not exist.", in.Model))
		return
	}
	step, st, err := s.script.Next(req)
	if err != nil {
		s.refuse(w, n, http.StatusBadRequest, "", err)
		return
	}
	s.update(n, func(e *Exchange) { e.Step = step })

	switch {
	case st.Disconnect:
		disconnect(w)
		return
	case st.Error != nil:
		fail(w, st.Error)
		return
	}
	resp := st.Response(in.Model)
	if st.Usage == nil {
		answer := resp.Text
		for _, c := range resp.Calls {
			answer += c.Name + c.Arguments
		}
		resp.Usage = model.Usage{
			PromptTokens:       s.opts.Tokens(prompt),
			CompletionTokens:   s.opts.Tokens([]byte(answer)),
			CachedPromptTokens: s.opts.Tokens(prompt[:commonPrefix(prev, prompt)]),
		}
	}
	s.update(n, func(e *Exchange) { e.Usage = resp.Usage })
	id := fmt.Sprintf("chatcmpl-openaitest-%d", step)
	if !in.Stream {
		if st.Stall {
			s.stall(r, n)
			return
		}
		writeJSON(w, http.StatusOK, completion(id, resp))
		return
	}
	s.stream(w, r, n, id, st, resp, in.StreamOptions != nil && in.StreamOptions.IncludeUsage)
}

// request reads the body back into a model request.
func (in *wire) request() *model.Request {
	req := &model.Request{Messages: in.Messages, Tools: in.Tools, CacheKey: in.PromptCacheKey, Temperature: in.Temperature, MaxTokens: in.MaxCompletionTokens}
	if req.MaxTokens == nil {
		req.MaxTokens = in.MaxTokens
	}
	if rf := in.ResponseFormat; rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil {
		js := rf.JSONSchema
		req.Output = &model.OutputSchema{Name: js.Name, Description: js.Description, Schema: js.Schema, Strict: js.Strict}
	}
	return req
}

func (s *Server) update(n int, f func(*Exchange)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.log[n-1])
}

// refuse answers a request that broke the script or the protocol, and
// records why.
func (s *Server) refuse(w http.ResponseWriter, n, status int, code string, err error) {
	s.mu.Lock()
	s.errs = append(s.errs, fmt.Errorf("request %d: %w", n, err))
	s.mu.Unlock()
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": err.Error(), "type": "invalid_request_error", "code": nullable(code)}})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// fail answers with a scripted error.
func fail(w http.ResponseWriter, e *scripted.Error) {
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	if e.Body != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(e.Status)
		_, _ = io.WriteString(w, e.Body)
		return
	}
	writeJSON(w, e.Status, map[string]any{"error": map[string]any{"message": e.Message, "type": nullable(e.Type), "code": nullable(e.Code)}})
}

// disconnect resets the connection without answering.
func disconnect(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with a reset, not a clean end
	}
	_ = conn.Close()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

type toolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func wireUsage(u model.Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.PromptTokens + u.CompletionTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CachedPromptTokens},
	}
}

// completion is a whole answer in the protocol's shape.
func completion(id string, r *model.Response) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.Text != "" || len(r.Calls) == 0 {
		msg["content"] = r.Text
	}
	if len(r.Calls) > 0 {
		calls := make([]toolCall, len(r.Calls))
		for i, c := range r.Calls {
			calls[i].ID, calls[i].Type = c.ID, "function"
			calls[i].Function.Name, calls[i].Function.Arguments = c.Name, c.Arguments
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": id, "object": "chat.completion", "created": 0, "model": r.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": r.FinishReason, "logprobs": nil}},
		"usage":   wireUsage(r.Usage),
	}
}

// stream sends the answer as server-sent events: the text word by word,
// each call's name and then its arguments in two pieces, the finish
// reason, the usage when asked, [DONE]. A stalled step sends its text and
// waits for the client to leave.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, n int, id string, st *scripted.Step, resp *model.Response, includeUsage bool) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	event := func(choices []any, usage map[string]any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": resp.Model, "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish, "logprobs": nil}}
	}
	event(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	for _, word := range strings.SplitAfter(resp.Text, " ") {
		if word != "" {
			event(delta(map[string]any{"content": word}, nil), nil)
		}
	}
	if st.Stall {
		_ = rc.Flush()
		s.stall(r, n)
		return
	}
	for i, c := range resp.Calls {
		first := toolCall{Index: &i, ID: c.ID, Type: "function"}
		first.Function.Name = c.Name
		event(delta(map[string]any{"tool_calls": []toolCall{first}}, nil), nil)
		for _, piece := range halves(c.Arguments) {
			var more toolCall
			more.Index = &i
			more.Function.Arguments = piece
			event(delta(map[string]any{"tool_calls": []toolCall{more}}, nil), nil)
		}
	}
	event(delta(map[string]any{}, resp.FinishReason), nil)
	if includeUsage {
		event([]any{}, wireUsage(resp.Usage))
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// stall waits for the client of request n to leave (or the server to
// close).
func (s *Server) stall(r *http.Request, n int) {
	s.mu.Lock()
	gone := s.goneLocked(n)
	s.mu.Unlock()
	select {
	case <-r.Context().Done():
		close(gone)
	case <-s.closing:
	}
}

// halves splits s in two at a character boundary near its middle.
func halves(s string) []string {
	if s == "" {
		return nil
	}
	i := len(s) / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		return []string{s}
	}
	return []string{s[:i], s[i:]}
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
