//go:build !linux

package acp

// setPipeSize does nothing: a pipe's buffer cannot be resized outside
// Linux (writes then wait for the reader, as with any pipe).
func setPipeSize(fd uintptr, size int) {}
