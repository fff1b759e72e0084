package model

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// APIError is a provider's refusal of a request: an HTTP error status, or
// an error the provider reported inside an answer (in the middle of a
// stream, say). Adapters return it wrapped; find it with errors.As.
type APIError struct {
	// Status is the HTTP status code; 0 for an error reported inside an
	// answer that named none.
	Status int
	// Message is the provider's error message, as it wrote it.
	Message string
	// Type is the provider's error type (e.g. "invalid_request_error"),
	// when it sends one.
	Type string
	// Code is the provider's error code (e.g. "model_not_found"), when it
	// sends one.
	Code string
	// URL is the endpoint the request went to.
	URL string
	// Model is the model the request named.
	Model string
	// Retryable reports whether the same request may succeed later: rate
	// limits (429) and server failures (5xx). It stays true when the
	// retries ran out.
	Retryable bool
	// RetryAfter is the wait the provider asked for before a retry
	// (Retry-After), zero when it named none.
	RetryAfter time.Duration
	// Attempts is how many times the request was sent, retries included.
	Attempts int
	// Hint says what to check, e.g. the API key for a 401.
	Hint string
}

// Error says what failed (the endpoint, the model, the status and the
// provider's message), how often it was tried and what to check.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("model: ")
	if e.URL != "" {
		fmt.Fprintf(&b, "POST %s ", e.URL)
	}
	if e.Model != "" {
		fmt.Fprintf(&b, "(model %q) ", e.Model)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "failed: %d %s", e.Status, http.StatusText(e.Status))
	} else {
		b.WriteString("failed: the server reported an error in its answer")
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "; %s", e.Hint)
	}
	return b.String()
}
