//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// NewContainer is only implemented on Linux, where the runner finds and
// signals the containers' processes through /proc; elsewhere it reports
// that.
func NewContainer(opts *ContainerOptions) (Runner, error) {
	if _, err := containerConfigOf(opts); err != nil {
		return nil, err
	}
	return nil, errors.New("sandbox: the container runner requires Linux (a local engine whose processes it can see), running on " + runtime.GOOS)
}
