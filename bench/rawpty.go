//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// rawDrain runs argv in a pty and reads everything as fast as possible: the
// floor any terminal host can reach on this machine.
func rawDrain(argv []string) (time.Duration, int64, error) {
	start := time.Now()
	cmd := exec.Command(argv[0], argv[1:]...)
	ptmx, err := pty.Start(cmd)
	if err != nil {
		return 0, 0, fmt.Errorf("start %q: %w", argv, err)
	}
	defer ptmx.Close()
	buf := make([]byte, 64*1024)
	var n int64
	for {
		k, err := ptmx.Read(buf)
		n += int64(k)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
				break
			}
			return 0, n, err
		}
	}
	if err := cmd.Wait(); err != nil {
		return 0, n, fmt.Errorf("wait %q: %w", argv, err)
	}
	return time.Since(start), n, nil
}
