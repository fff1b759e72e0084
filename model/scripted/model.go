package scripted

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillkit/skillkit/model"
)

// DefaultName is the model name of a scripted model's responses unless
// Options.Name gives another.
const DefaultName = "scripted"

// ErrScriptEnded is wrapped by the error of a request that comes after
// the last step.
var ErrScriptEnded = errors.New("the script has no step left")

// ErrUnexpectedRequest is wrapped by the error of a request that does not
// match its step's expectations.
var ErrUnexpectedRequest = errors.New("the request is not the one the script expects")

// ErrDisconnected is wrapped by the error of a step that scripts a dropped
// connection.
var ErrDisconnected = errors.New("the scripted provider dropped the connection")

// Options configures a scripted model. Nil means defaults.
type Options struct {
	// Name is the model name in responses and errors; empty means
	// DefaultName.
	Name string
	// Label names the script in errors (its file name, say); empty means
	// "script".
	Label string
}

// Model replays a script: the n-th request gets the n-th step. It is safe
// for concurrent use; concurrent requests take steps in the order they
// arrive.
type Model struct {
	name, label string
	steps       []Step

	mu   sync.Mutex
	next int // steps played
}

// New returns a model that replays s, after checking it (Script.Check).
func New(s *Script, opts *Options) (*Model, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Label == "" {
		o.Label = "script"
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("scripted model: %s: %w", o.Label, err)
	}
	return &Model{name: o.Name, label: o.Label, steps: s.Steps}, nil
}

// Load returns a model that replays the script file at path, labelled
// with the path.
func Load(path string) (*Model, error) {
	s, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return New(s, &Options{Label: path})
}

// Name is the model name of the responses.
func (m *Model) Name() string { return m.name }

// Next takes the step that answers req: it checks the step's expectations
// and returns the step and its number (1 for the first). A request after
// the last step, or one the step does not expect, is an error naming the
// step; a request that does not match still uses up its step.
func (m *Model) Next(req *model.Request) (int, *Step, error) {
	m.mu.Lock()
	n := m.next + 1
	if m.next < len(m.steps) {
		m.next++
	}
	m.mu.Unlock()
	if n > len(m.steps) {
		return n, nil, fmt.Errorf("scripted model: %s: request %d: %w (all %d played)", m.label, n, ErrScriptEnded, len(m.steps))
	}
	st := &m.steps[n-1]
	if err := st.Expect.Check(req); err != nil {
		return n, nil, fmt.Errorf("scripted model: %s: step %d: %w: %w", m.label, n, ErrUnexpectedRequest, err)
	}
	return n, st, nil
}

// Played is how many steps have been taken.
func (m *Model) Played() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next
}

// Done reports an error when steps remain unplayed, so a test can check
// that the whole script was used.
func (m *Model) Done() error {
	if n := m.Played(); n < len(m.steps) {
		return fmt.Errorf("scripted model: %s: %d of %d steps were played; step %d was not", m.label, n, len(m.steps), n+1)
	}
	return nil
}

// Generate plays the next step.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	n, st, err := m.Next(req)
	if err != nil {
		return nil, err
	}
	if err := m.failure(n, st); err != nil {
		return nil, err
	}
	if st.Stall {
		<-ctx.Done()
		return nil, fmt.Errorf("scripted model: %s: step %d stalled: %w", m.label, n, ctx.Err())
	}
	return st.Response(m.name), nil
}

// Stream plays the next step as a stream: the text as one chunk, each call
// as one piece, then the Response.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(model.Chunk{}, fmt.Errorf("scripted model: %w", err))
			return
		}
		n, st, err := m.Next(req)
		if err == nil {
			err = m.failure(n, st)
		}
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if st.Text != "" && !yield(model.Chunk{Text: st.Text}, nil) {
			return
		}
		if st.Stall {
			<-ctx.Done()
			yield(model.Chunk{}, fmt.Errorf("scripted model: %s: step %d stalled: %w", m.label, n, ctx.Err()))
			return
		}
		resp := st.Response(m.name)
		for i, c := range resp.Calls {
			if err := ctx.Err(); err != nil {
				yield(model.Chunk{}, fmt.Errorf("scripted model: %w", err))
				return
			}
			if !yield(model.Chunk{Call: &model.CallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}}, nil) {
				return
			}
		}
		yield(model.Chunk{Response: resp}, nil)
	}
}

// failure is the error a failing step scripts, or nil.
func (m *Model) failure(n int, st *Step) error {
	switch {
	case st.Disconnect:
		return fmt.Errorf("scripted model: %s: step %d: %w", m.label, n, ErrDisconnected)
	case st.Error != nil:
		e := st.Error
		msg := e.Message
		if msg == "" {
			msg = strings.TrimSpace(e.Body)
		}
		var after time.Duration
		if s, err := strconv.Atoi(strings.TrimSpace(e.RetryAfter)); err == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return fmt.Errorf("scripted model: %s: step %d: %w", m.label, n, &model.APIError{
			Status: e.Status, Message: msg, Type: e.Type, Code: e.Code, Model: m.name,
			Retryable: e.Status == 429 || e.Status >= 500, RetryAfter: after, Attempts: 1,
		})
	}
	return nil
}
