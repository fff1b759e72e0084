//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package termtext

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
