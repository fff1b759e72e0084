// Package openai is the model adapter for the OpenAI Chat Completions
// protocol, spoken by OpenAI and by the servers compatible with it (vLLM,
// llama.cpp, Ollama, LM Studio, DeepSeek, OpenRouter, …), built on
// github.com/openai/openai-go/v3.
//
// New takes the base URL, API key and model name from Options, never from
// the environment behind the caller's back; FromEnv reads OPENAI_BASE_URL,
// OPENAI_API_KEY and SKILLKIT_MODEL into Options for callers that want
// that. A server that needs no key gets no Authorization header.
//
// Requests that fail for a reason that may pass — a rate limit (429), a
// server failure (5xx), a dropped or reset connection — are retried with
// exponential backoff and jitter, or after the wait the server names
// (Retry-After, in seconds or as an HTTP date), within a bound on attempts
// and on the total wait, and never after ctx ends; other 4xx are not
// retried. A streamed answer is retried only before its first piece
// arrives. A refusal is a *model.APIError that names the endpoint, the
// model, the status and the server's own message, and says what to check.
//
// Options.CaptureRequest sees every request body exactly as it goes on the
// wire, taken at the HTTP layer; Model.RequestBody builds that body without
// sending it.
package openai

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/session"
)

// The environment variables FromEnv reads.
const (
	// EnvBaseURL names the server's base URL, e.g. http://localhost:8000/v1.
	EnvBaseURL = "OPENAI_BASE_URL"
	// EnvAPIKey holds the API key.
	EnvAPIKey = "OPENAI_API_KEY"
	// EnvModel names the model.
	EnvModel = "SKILLKIT_MODEL"
)

// DefaultBaseURL is OpenAI's API, used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Defaults of the retry policy.
const (
	// DefaultMaxAttempts is how many times a request is sent at most,
	// the first time included.
	DefaultMaxAttempts = 4
	// DefaultMaxWait bounds the time spent waiting between attempts of one
	// request, added up.
	DefaultMaxWait = time.Minute
	// DefaultBaseDelay is the wait before the first retry when the server
	// names none; it doubles with every retry, up to DefaultMaxDelay.
	DefaultBaseDelay = 500 * time.Millisecond
	// DefaultMaxDelay caps one backoff wait.
	DefaultMaxDelay = 8 * time.Second
)

// Options configures the adapter. The zero value of every field but Model
// means its default; New checks them all.
type Options struct {
	// BaseURL is the server's API root, the URL that "/chat/completions"
	// is appended to (for most servers it ends in /v1). Empty means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. Empty sends no Authorization
	// header, for servers that need no key (vLLM, llama.cpp, Ollama).
	APIKey string
	// Model is the model name the server knows; required.
	Model string
	// HTTPClient sends the requests; nil means a client of its own over a
	// clone of http.DefaultTransport. Requests wait for the server as long
	// as their ctx allows: give ctx a deadline to bound them (a client
	// Timeout would also cut long streams).
	HTTPClient *http.Client
	// Retry is the retry policy; nil means the defaults.
	Retry *Retry
	// CaptureRequest, when set, is called with the body of every HTTP
	// request exactly as it is sent, before it is sent: attempt is 1 for
	// a request's first try and counts up for its retries (which send
	// the same bytes). The slice is the callee's to keep.
	CaptureRequest func(attempt int, body []byte)
	// LegacyMaxTokens sends Request.MaxTokens as max_tokens instead of
	// max_completion_tokens, for servers that know only the older field.
	LegacyMaxTokens bool
	// ExtraBody adds top-level fields to every request body, for what a
	// server accepts beyond the protocol (vLLM's chat_template_kwargs,
	// llama.cpp's cache_prompt). Keys are field names (letters, digits,
	// '_', '-'); the fields the adapter writes itself (messages, model,
	// tools, stream, stream_options) cannot be replaced, and a field that
	// a Request also sets (temperature, say) takes the value given here.
	ExtraBody map[string]any
}

// Retry is the retry policy for failures that may pass: HTTP 429 and 5xx,
// and connections dropped or reset before the answer arrived. The zero
// value of every field means its default.
type Retry struct {
	// MaxAttempts is how many times a request is sent at most, the first
	// time included: 1 never retries. 0 means DefaultMaxAttempts.
	MaxAttempts int
	// MaxWait bounds the waits between the attempts of one request,
	// added up; a wait that would pass it (say, a long Retry-After) ends
	// the retries with the last error. 0 means DefaultMaxWait.
	MaxWait time.Duration
	// Backoff is the wait before retry n (1 for the first) when the server
	// names none. Nil means DefaultBaseDelay·2^(n-1), at most
	// DefaultMaxDelay, less a random jitter of up to half of that.
	Backoff func(n int) time.Duration
	// Sleep waits d or until ctx ends, returning ctx's error then; tests
	// replace it so they never wait. Nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock that a Retry-After HTTP date is measured against.
	// Nil means time.Now.
	Now func() time.Time
}

// FromEnv returns the options that the environment names: BaseURL from
// OPENAI_BASE_URL, APIKey from OPENAI_API_KEY, Model from SKILLKIT_MODEL.
// getenv looks a variable up; nil means os.Getenv. Callers override fields
// (from flags, say) before passing the result to New.
func FromEnv(getenv func(string) string) *Options {
	if getenv == nil {
		getenv = os.Getenv
	}
	return &Options{BaseURL: getenv(EnvBaseURL), APIKey: getenv(EnvAPIKey), Model: getenv(EnvModel)}
}

// Model is a Chat Completions model. It implements model.Model and is safe
// for concurrent use.
type Model struct {
	svc      sdk.ChatCompletionService
	endpoint string // the chat completions URL, for errors
	base     string
	name     string
	capture  func(int, []byte)
	legacy   bool
	extra    []option.RequestOption
	retry    Retry
}

var _ model.Model = (*Model)(nil)

// extraKey is the form of an ExtraBody key: a plain field name, which the
// JSON path syntax used to set it reads literally.
var extraKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// New returns the adapter, after checking every option; an invalid one is
// an error naming the field and what to do.
func New(opts *Options) (*Model, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Model == "" {
		return nil, fmt.Errorf("openai: no model name: set Options.Model (or %s) to a model the server serves", EnvModel)
	}
	base := o.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: Options.BaseURL %q is not an http or https URL; give the server's API root, such as http://localhost:8000/v1 (%s)", o.BaseURL, EnvBaseURL)
	}
	base = strings.TrimRight(base, "/")
	r, err := retryPolicy(o.Retry)
	if err != nil {
		return nil, err
	}
	m := &Model{endpoint: base + "/chat/completions", base: base, name: o.Model, capture: o.CaptureRequest, legacy: o.LegacyMaxTokens, retry: r}
	for _, k := range slices.Sorted(maps.Keys(o.ExtraBody)) {
		switch {
		case !extraKey.MatchString(k):
			return nil, fmt.Errorf("openai: Options.ExtraBody key %q is not a plain field name (letters, digits, '_', '-')", k)
		case slices.Contains([]string{"messages", "model", "tools", "stream", "stream_options"}, k):
			return nil, fmt.Errorf("openai: Options.ExtraBody key %q is a field the adapter writes; set it through model.Request or Options", k)
		}
		m.extra = append(m.extra, option.WithJSONSet(k, o.ExtraBody[k]))
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			hc.Transport = t.Clone()
		}
	}
	// The service is made without the SDK's client constructor, which
	// would read OPENAI_* variables on its own; its retries are off, the
	// adapter's own policy replaces them.
	copts := []option.RequestOption{option.WithBaseURL(base), option.WithHTTPClient(hc), option.WithMaxRetries(0)}
	if o.APIKey != "" {
		copts = append(copts, option.WithAPIKey(o.APIKey))
	}
	m.svc = sdk.NewChatCompletionService(copts...)
	return m, nil
}

// retryPolicy checks r and fills in its defaults.
func retryPolicy(in *Retry) (Retry, error) {
	var r Retry
	if in != nil {
		r = *in
	}
	switch {
	case r.MaxAttempts < 0:
		return r, fmt.Errorf("openai: Options.Retry.MaxAttempts is %d; want 1 or more (1: no retries), or 0 for %d", r.MaxAttempts, DefaultMaxAttempts)
	case r.MaxWait < 0:
		return r, fmt.Errorf("openai: Options.Retry.MaxWait is %s; want a positive duration, or 0 for %s", r.MaxWait, DefaultMaxWait)
	}
	if r.MaxAttempts == 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.MaxWait == 0 {
		r.MaxWait = DefaultMaxWait
	}
	if r.Backoff == nil {
		r.Backoff = defaultBackoff
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r, nil
}

// defaultBackoff is DefaultBaseDelay·2^(n-1) capped at DefaultMaxDelay,
// less a random jitter of up to half, so that clients that failed together
// do not retry together.
func defaultBackoff(n int) time.Duration {
	d := DefaultMaxDelay
	if n >= 1 && n < 16 {
		d = min(DefaultBaseDelay<<(n-1), DefaultMaxDelay)
	}
	return d - rand.N(d/2+1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Name is the model name requests carry.
func (m *Model) Name() string { return m.name }

// BaseURL is the API root requests go to.
func (m *Model) BaseURL() string { return m.base }

// Generate sends the request and returns the whole answer, retrying as the
// policy allows.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	p, err := m.params(req, false)
	if err != nil {
		return nil, err
	}
	var c *sdk.ChatCompletion
	err = m.do(ctx, func(ctx context.Context, _ *attempt, opts []option.RequestOption) error {
		var err error
		c, err = m.svc.New(ctx, p, m.options(opts)...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m.response(c)
}

// Stream sends the request with streaming on (usage included) and yields
// the answer as it arrives, then the whole Response. The request is
// retried as the policy allows until its first piece arrives, never after.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		p, err := m.params(req, true)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		var st *ssestream.Stream[sdk.ChatCompletionChunk]
		var last *attempt
		err = m.do(ctx, func(ctx context.Context, a *attempt, opts []option.RequestOption) error {
			s := m.svc.NewStreaming(ctx, p, m.options(opts)...)
			if !s.Next() {
				err := s.Err()
				_ = s.Close()
				if err == nil {
					err = errEmptyStream
				}
				return err
			}
			st, last = s, a
			return nil
		})
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		defer st.Close()
		acc := newAccumulator()
		for more := true; more; more = st.Next() {
			// Chunks already read are not handed out once ctx has ended.
			if ctx.Err() != nil {
				break
			}
			for _, c := range acc.add(st.Current()) {
				if !yield(c, nil) {
					return
				}
			}
		}
		if err := cmp.Or(ctx.Err(), st.Err()); err != nil {
			yield(model.Chunk{}, withAttempts(m.failed(ctx, last, err), last.n))
			return
		}
		resp, err := acc.response(m.name)
		if err != nil {
			yield(model.Chunk{}, fmt.Errorf("model: POST %s (model %q): %w", m.endpoint, m.name, err))
			return
		}
		yield(model.Chunk{Response: resp}, nil)
	}
}

// response converts a whole answer.
func (m *Model) response(c *sdk.ChatCompletion) (*model.Response, error) {
	if len(c.Choices) == 0 {
		// Some servers report a failure with status 200.
		if msg, typ, code := errorFields([]byte(c.RawJSON())); strings.Contains(c.RawJSON(), `"error"`) && msg != "" {
			e := &model.APIError{Message: msg, Type: typ, Code: code, URL: m.endpoint, Model: m.name, Attempts: 1}
			e.Hint = hint(e)
			return nil, e
		}
		return nil, fmt.Errorf("model: POST %s (model %q): the server's answer has no choices", m.endpoint, m.name)
	}
	ch := c.Choices[0]
	r := &model.Response{
		Text: ch.Message.Content, Refusal: ch.Message.Refusal, FinishReason: model.FinishReason(ch.FinishReason),
		Usage: usage(c.Usage), ID: c.ID, Model: cmp.Or(c.Model, m.name),
	}
	for i, tc := range ch.Message.ToolCalls {
		call := session.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if tc.Type == "custom" {
			call.Name, call.Arguments = tc.Custom.Name, tc.Custom.Input
		}
		if call.Name == "" {
			return nil, fmt.Errorf("model: POST %s (model %q): the server's tool call %d has no name", m.endpoint, m.name, i)
		}
		r.Calls = append(r.Calls, call)
	}
	return r, nil
}
