package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/skillkit/skillkit/model"
)

// maxErrorBody caps the bytes of an error response that are read.
const maxErrorBody = 64 << 10

// maxMessage caps the server's message quoted in an error.
const maxMessage = 2000

var errEmptyStream = errors.New("the server ended the stream without sending anything")

// attempt is what one try of a request saw at the HTTP layer.
type attempt struct {
	n      int
	status int         // an error status, or 0
	header http.Header // of the error response
	body   []byte      // of the error response, up to maxErrorBody
}

// middleware captures the request body as sent and keeps an error
// response's status, headers and body: the SDK's own reading of them
// drops what servers other than OpenAI's write.
func (m *Model) middleware(a *attempt) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if m.capture != nil && req.Body != nil && req.Body != http.NoBody {
			body, err := requestBody(req)
			if err != nil {
				return nil, fmt.Errorf("reading the request body to capture it: %w", err)
			}
			m.capture(a.n, body)
		}
		res, err := next(req)
		if err != nil || res.StatusCode < 400 {
			return res, err
		}
		body, rerr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		a.status, a.header, a.body = res.StatusCode, res.Header, body
		if rerr != nil {
			return nil, fmt.Errorf("reading the %d response: %w", res.StatusCode, rerr)
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		return res, nil
	}
}

// requestBody returns a copy of the body the request will send, leaving
// the request able to send it.
func requestBody(req *http.Request) ([]byte, error) {
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(body))
	return bytes.Clone(body), err
}

// do runs call, one HTTP request, until it succeeds, fails for good or the
// retry policy ends it; the error is the last attempt's.
func (m *Model) do(ctx context.Context, call func(ctx context.Context, a *attempt, opts []option.RequestOption) error) error {
	var waited time.Duration
	for n := 1; ; n++ {
		a := &attempt{n: n}
		err := call(ctx, a, []option.RequestOption{option.WithMiddleware(m.middleware(a))})
		if err == nil {
			return nil
		}
		err = m.failed(ctx, a, err)
		if ctx.Err() != nil || !retryable(err) {
			return err
		}
		if n >= m.retry.MaxAttempts {
			return withAttempts(err, n)
		}
		d, named := m.retryAfter(a)
		if !named {
			d = max(m.retry.Backoff(n), 0)
		}
		if waited+d > m.retry.MaxWait {
			who := "the backoff"
			if named {
				who = "the server"
			}
			return fmt.Errorf("%w; not retried: %s asks to wait %s, which passes the retry budget of %s (Retry.MaxWait)", withAttempts(err, n), who, d, m.retry.MaxWait)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return fmt.Errorf("%w; not retried: the context's deadline comes before the wait of %s ends", withAttempts(err, n), d)
		}
		if serr := m.retry.Sleep(ctx, d); serr != nil {
			return fmt.Errorf("%w; gave up waiting to retry: %w", withAttempts(err, n), serr)
		}
		waited += d
	}
}

// withAttempts records on err how many attempts were made.
func withAttempts(err error, n int) error {
	if ae, ok := errors.AsType[*model.APIError](err); ok {
		ae.Attempts = n
	} else if re, ok := errors.AsType[*requestError](err); ok {
		re.attempts = n
	}
	return err
}

// retryable reports whether a failure may pass: 429, 5xx, a connection
// dropped or reset, a timeout of the transport.
func retryable(err error) bool {
	if ae, ok := errors.AsType[*model.APIError](err); ok {
		return ae.Retryable
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		if errors.Is(ue.Err, io.EOF) {
			return true // the server closed the connection without answering
		}
		if ne, ok := errors.AsType[net.Error](ue.Err); ok && ne.Timeout() {
			return true
		}
	}
	return false
}

// failed turns what went wrong in an attempt into the error to report: an
// error status or a stream error is a *model.APIError, the end of ctx
// wraps ctx.Err(), anything else is wrapped with the endpoint and model
// and what to check.
func (m *Model) failed(ctx context.Context, a *attempt, err error) error {
	if a.status != 0 {
		return m.apiError(a)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("model: POST %s (model %q): %w", m.endpoint, m.name, ctx.Err())
	}
	if se, ok := errors.AsType[*ssestream.StreamError](err); ok {
		return m.streamError(se)
	}
	e := &requestError{endpoint: m.endpoint, model: m.name, err: err, cause: err}
	if ue, ok := errors.AsType[*url.Error](err); ok || retryable(err) {
		if ok {
			e.cause = ue.Err // the URL is said once
		}
		e.hint = fmt.Sprintf("check the base URL (Options.BaseURL, %s) and that the server is running", EnvBaseURL)
	}
	return e
}

// requestError is a failure without an answer from the server: the
// connection, or an answer that could not be read.
type requestError struct {
	endpoint, model string
	err             error // what failed, kept for errors.Is and As
	cause           error // what the message quotes
	attempts        int
	hint            string
}

// Error says what failed, how often it was tried and what to check.
func (e *requestError) Error() string {
	msg := fmt.Sprintf("model: POST %s (model %q) failed: %v", e.endpoint, e.model, e.cause)
	if e.attempts > 1 {
		msg += fmt.Sprintf(" (after %d attempts)", e.attempts)
	}
	if e.hint != "" {
		msg += "; " + e.hint
	}
	return msg
}

// Unwrap returns the failure, for errors.Is and errors.As.
func (e *requestError) Unwrap() error { return e.err }

// apiError reads an error response.
func (m *Model) apiError(a *attempt) *model.APIError {
	msg, typ, code := errorFields(a.body)
	e := &model.APIError{
		Status: a.status, Message: msg, Type: typ, Code: code, URL: m.endpoint, Model: m.name,
		Retryable: a.status == http.StatusTooManyRequests || a.status >= 500, Attempts: a.n,
	}
	if d, ok := m.retryAfter(a); ok {
		e.RetryAfter = d
	}
	e.Hint = hint(e)
	return e
}

// streamError reads an error event of a stream.
func (m *Model) streamError(se *ssestream.StreamError) *model.APIError {
	msg, typ, code := errorFields(se.Event.Data)
	if msg == "" {
		msg = se.Message
	}
	e := &model.APIError{Message: msg, Type: typ, Code: code, URL: m.endpoint, Model: m.name, Attempts: 1}
	if s, err := strconv.Atoi(code); err == nil && s >= 400 && s <= 599 {
		e.Status = s
		e.Retryable = s == http.StatusTooManyRequests || s >= 500
	}
	e.Hint = hint(e)
	return e
}

// errorFields finds the message, type and code in an error body, in the
// shapes servers write: OpenAI's {"error": {"message", "type", "code"}},
// {"error": "text"} (Ollama, llama.cpp proxies), {"message", "type",
// "code"} (vLLM), {"detail": …} (FastAPI servers); anything else is quoted
// as text.
func errorFields(body []byte) (msg, typ, code string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Type    json.RawMessage `json:"type"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return clip(strings.TrimSpace(string(body))), "", ""
	}
	if len(v.Error) > 0 && v.Error[0] == '{' {
		if f := errorObject(v.Error); f[0] != "" {
			return f[0], f[1], f[2]
		}
	}
	if s := text(v.Error); s != "" {
		return clip(s), text(v.Type), text(v.Code)
	}
	if s := text(v.Message); s != "" {
		return clip(s), text(v.Type), text(v.Code)
	}
	if s := text(v.Detail); s != "" {
		return clip(s), "", ""
	}
	return clip(strings.TrimSpace(string(body))), "", ""
}

func errorObject(raw json.RawMessage) [3]string {
	var o struct {
		Message json.RawMessage `json:"message"`
		Type    json.RawMessage `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return [3]string{}
	}
	return [3]string{clip(text(o.Message)), text(o.Type), text(o.Code)}
}

// text is a JSON string's value, a number's or object's JSON text, or ""
// for null or nothing.
func text(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage] + "…"
}

// retryAfter reads the wait an error response names: Retry-After-Ms (as
// OpenAI sends it), else Retry-After in seconds or as an HTTP date.
func (m *Model) retryAfter(a *attempt) (time.Duration, bool) {
	if a.header == nil {
		return 0, false
	}
	if v := strings.TrimSpace(a.header.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(a.header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(m.retry.Now()), 0), true
	}
	return 0, false
}

// hint says what to check for an error.
func hint(e *model.APIError) string {
	switch {
	case e.Status == http.StatusUnauthorized:
		return fmt.Sprintf("check the API key (Options.APIKey, %s)", EnvAPIKey)
	case e.Status == http.StatusForbidden:
		return fmt.Sprintf("check that the API key (%s) may use this model", EnvAPIKey)
	case e.Code == "model_not_found" || e.Status == http.StatusNotFound && strings.Contains(strings.ToLower(e.Message), "model"):
		return fmt.Sprintf("check the model name (Options.Model, %s) against the models the server serves", EnvModel)
	case e.Status == http.StatusNotFound:
		return fmt.Sprintf("check the base URL (Options.BaseURL, %s): it is the API root that /chat/completions follows, for most servers ending in /v1; and the model name (%s)", EnvBaseURL, EnvModel)
	case e.Code == "context_length_exceeded":
		return "the request is longer than the model's context window; shorten the conversation or use a model with a longer one"
	case e.Status == http.StatusTooManyRequests:
		return "the provider is rate-limiting this key or its quota is spent; wait, or check the account's limits"
	case e.Status >= 500:
		return "the server failed; it may be overloaded or restarting"
	}
	return ""
}
