//go:build unix

package filetools

import "syscall"

// openFlags are added to every open for reading: O_NONBLOCK, so that a
// FIFO (or a device that would wait) cannot block the open, and
// O_NOCTTY, so that a terminal is never made the controlling one. The
// opened file's type is checked before anything is read from it.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
