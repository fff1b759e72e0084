package skill

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is wrapped by every error that rejects a skill's content, so
// callers can tell a bad skill from an I/O failure with errors.Is.
var ErrInvalid = errors.New("invalid skill")

// ErrLimit is wrapped by errors raised when a skill exceeds a size or count
// limit (Limits).
var ErrLimit = errors.New("skill limit exceeded")

// Severity tells whether a diagnostic stopped a skill from loading.
type Severity int

const (
	// Warning: the skill loaded, but something in it was ignored or fixed up.
	Warning Severity = iota
	// Error: the skill (or the file named) was skipped.
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Diagnostic is one problem found while loading a skill. It names the file
// and, where there is one, the 1-based line and the front-matter field.
type Diagnostic struct {
	// File names the file the problem is in, for people.
	File string
	// Line is the 1-based line of the problem, or 0 when there is none.
	Line int
	// Field is the front-matter field concerned, or "" when none is.
	Field string
	// Severity says whether the skill is still usable (Warning) or not
	// (Error).
	Severity Severity
	// Message describes the problem.
	Message string
}

// String renders the diagnostic as "file:line: severity: message", the
// shape compilers use, so editors can jump to it.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d", d.Line)
	}
	b.WriteString(": ")
	b.WriteString(d.Severity.String())
	b.WriteString(": ")
	b.WriteString(d.Message)
	return b.String()
}

// LoadError is the error Parse returns when a SKILL.md cannot be understood.
// It wraps ErrInvalid.
type LoadError struct {
	// Err is what the error wraps besides the message: ErrInvalid (the
	// default) or ErrLimit.
	Err error
	// File names the SKILL.md, for people.
	File string
	// Line is the 1-based line of the problem, or 0 when there is none.
	Line int
	// Field is the front-matter field concerned, or "" when none is.
	Field string
	// Message describes the problem.
	Message string
}

// Error implements error.
func (e *LoadError) Error() string {
	return Diagnostic{File: e.File, Line: e.Line, Field: e.Field, Severity: Error, Message: e.Message}.String()
}

// Unwrap returns Err, or ErrInvalid when Err is nil.
func (e *LoadError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return ErrInvalid
}

// Diagnostic returns the error as an error-severity Diagnostic.
func (e *LoadError) Diagnostic() Diagnostic {
	return Diagnostic{File: e.File, Line: e.Line, Field: e.Field, Severity: Error, Message: e.Message}
}
