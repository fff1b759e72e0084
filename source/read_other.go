//go:build !linux

package source

// newHostReader has no descriptor-relative fast path on this platform;
// host directories are read through io/fs.
func newHostReader(Source) reader { return nil }
