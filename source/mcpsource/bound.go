package mcpsource

import (
	"fmt"
	"io"
	"net/http"
)

// responseLimit bounds one HTTP response from the server: a listing page
// or a file, as JSON. A file's bytes may arrive base64-encoded or as
// escaped text (up to six bytes a byte, for \u00XX), so the bound is six
// times the larger of the listing and file limits, and a megabyte for the
// envelope. Without it a server could make the host hold any amount of
// memory before a size check runs.
func responseLimit(o Options) int64 {
	return 6*max(o.MaxListBytes, o.MaxBytes) + 1<<20
}

// boundedClient returns a client like c (nil: a default one) whose
// response bodies end in an error past limit bytes.
func boundedClient(c *http.Client, limit int64) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	next := out.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = boundedTransport{next: next, limit: limit}
	return out
}

// boundedTransport bounds each response body.
type boundedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if resp.ContentLength > t.limit {
		resp.Body.Close()
		return nil, fmt.Errorf("mcpsource: the server's response of %d bytes is over the limit of %d: %w", resp.ContentLength, t.limit, ErrLimit)
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: t.limit}
	return resp, nil
}

// boundedBody fails a read past its limit.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("mcpsource: the server's response is over the limit: %w", ErrLimit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
