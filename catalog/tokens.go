package catalog

import (
	"errors"
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// DefaultEncoding is the token encoding a Counter uses when none is named:
// o200k_base, the encoding of current OpenAI models.
const DefaultEncoding = "o200k_base"

// ErrUnknownEncoding reports an encoding name NewCounter does not know.
var ErrUnknownEncoding = errors.New("catalog: unknown token encoding")

// Counter counts tokens offline (the vocabularies are compiled into the
// binary). Create one with NewCounter and reuse it: construction compiles
// the encoding's split pattern. A Counter is safe for concurrent use.
type Counter struct {
	codec    tokenizer.Codec
	encoding string
}

// NewCounter returns a Counter for the named encoding: "o200k_base" (the
// default, also chosen by ""), "cl100k_base", "p50k_base", "p50k_edit" or
// "r50k_base". Any other name is an error wrapping ErrUnknownEncoding.
func NewCounter(encoding string) (*Counter, error) {
	if encoding == "" {
		encoding = DefaultEncoding
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(encoding))
	if err != nil {
		return nil, fmt.Errorf("%w %q: use one of o200k_base, cl100k_base, p50k_base, p50k_edit, r50k_base (%w)",
			ErrUnknownEncoding, encoding, err)
	}
	// The codec is never mutated after this point (no SetErrorMode), which
	// is what makes concurrent Count calls safe.
	return &Counter{codec: codec, encoding: encoding}, nil
}

// Encoding returns the name of the counter's encoding.
func (c *Counter) Encoding() string { return c.encoding }

// Count returns the number of tokens in s.
func (c *Counter) Count(s string) (int, error) {
	n, err := c.codec.Count(s)
	if err != nil {
		return 0, fmt.Errorf("catalog: counting %s tokens: %w", c.encoding, err)
	}
	return n, nil
}
