//go:build !unix

package filetools

// openFlags are added to every open for reading; elsewhere than on Unix
// there is no FIFO to block an open, and the opened file's type is
// checked before anything is read from it.
const openFlags = 0
