//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// NewIsolated is only implemented on Linux; elsewhere it reports the
// missing feature.
func NewIsolated(opts *IsolatedOptions) (Runner, error) {
	return nil, &FeatureError{Feature: FeatureUserNamespaces, Err: errors.New("isolated runner requires Linux, running on " + runtime.GOOS)}
}
