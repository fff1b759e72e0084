package mcpsource

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
)

// redactor keeps the credentials of a server URL out of labels and
// error messages: user name, password, query and fragment may all carry
// tokens, and errors of the HTTP layer quote the URL they failed on.
type redactor struct {
	raw     string   // the URL as given, replaced by label
	label   string   // scheme://host/path
	secrets []string // longest first
}

// newRedactor parses raw. The error never quotes raw.
func newRedactor(raw string) (*redactor, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	label := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
	r := &redactor{raw: raw, label: label}
	add := func(s string) {
		if len(s) >= 2 && !strings.Contains(label, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	if u.User != nil {
		add(u.User.String())
		add(u.User.Username())
		add(url.PathEscape(u.User.Username()))
		if p, ok := u.User.Password(); ok {
			add(p)
			add(url.QueryEscape(p))
			add(url.PathEscape(p))
		}
	}
	add(u.RawQuery)
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
			add(url.QueryEscape(v))
		}
	}
	add(u.Fragment)
	add(u.RawFragment)
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	r.secrets = slices.Compact(r.secrets)
	return r, nil
}

// clean returns s with the URL replaced by the label and every secret
// by "REDACTED".
func (r *redactor) clean(s string) string {
	if r.raw != "" {
		s = strings.ReplaceAll(s, r.raw, r.label)
	}
	for _, x := range r.secrets {
		s = strings.ReplaceAll(s, x, "REDACTED")
	}
	return s
}

// scrub returns err with its message cleaned. Only the context errors
// stay reachable through errors.Is: the errors of the layers below may
// hold the URL, credentials included, in their fields.
func (r *redactor) scrub(err error) error {
	if err == nil {
		return nil
	}
	s := &scrubbed{msg: r.clean(err.Error())}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		s.cause = context.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		s.cause = context.Canceled
	}
	return s
}

// scrubbed is an error whose message was cleaned of credentials.
type scrubbed struct {
	msg   string
	cause error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.cause }
