package termhost

import (
	"errors"
	"fmt"
)

// Errors callers can test for with errors.Is.
var (
	// ErrUnknownTerminal: no live terminal has that id (never created, or
	// released).
	ErrUnknownTerminal = errors.New("unknown terminal")
	// ErrReleased: the terminal was released; only Output, Display and
	// the accessors still answer.
	ErrReleased = errors.New("terminal released")
	// ErrCommandNotFound: the command is not an executable file, nor found
	// on the PATH of the terminal's environment.
	ErrCommandNotFound = errors.New("command not found")
	// ErrInvalidDir: the working directory is not absolute or not a
	// directory.
	ErrInvalidDir = errors.New("invalid working directory")
	// ErrHostClosed: Create after Host.Close.
	ErrHostClosed = errors.New("terminal host closed")
)

// commandNotFoundError reads `command "x" not found` and is
// ErrCommandNotFound.
type commandNotFoundError struct {
	command string
	detail  string
}

func (e *commandNotFoundError) Error() string {
	msg := fmt.Sprintf("command %q not found", e.command)
	if e.detail != "" {
		msg += " (" + e.detail + ")"
	}
	return msg
}

func (e *commandNotFoundError) Is(target error) bool { return target == ErrCommandNotFound }

func unknownTerminal(id string) error {
	return fmt.Errorf("%w %q", ErrUnknownTerminal, id)
}
