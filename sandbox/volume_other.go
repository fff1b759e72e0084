//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"runtime"
)

// FeatureVolume names what NewVolume needs in a FeatureError.
const FeatureVolume = "bounded volumes (Linux, root, loop devices and mkfs.ext4)"

// NewVolume is only implemented on Linux; elsewhere it reports the
// missing feature.
func NewVolume(ctx context.Context, dir, image string, opts *VolumeOptions) (*Volume, error) {
	return nil, &FeatureError{Feature: FeatureVolume, Err: errors.New("volumes require Linux, running on " + runtime.GOOS)}
}

// Unmount does nothing where volumes do not exist.
func (v *Volume) Unmount() error { return nil }

// Remove does nothing where volumes do not exist.
func (v *Volume) Remove() error { return nil }
