package sshtest

import (
	"errors"
	"fmt"
	"os"
)

// Run is TB for a program that is no test (the bench, scripts/devbox): a
// failure panics with a RunError that Recover turns into the error of the
// function that deferred it; Close runs the cleanups, last first.
type Run struct {
	cleanups []func()
	failed   bool
}

// RunError is what a Run's failure panics with.
type RunError struct{ Err error }

func (e RunError) Error() string { return e.Err.Error() }

// Helper implements TB.
func (r *Run) Helper() {}

// Fatalf implements TB.
func (r *Run) Fatalf(format string, args ...any) {
	r.failed = true
	panic(RunError{fmt.Errorf("the sshd fixture: "+format, args...)})
}

// Fatal implements TB.
func (r *Run) Fatal(args ...any) {
	r.failed = true
	panic(RunError{errors.New("the sshd fixture: " + fmt.Sprint(args...))})
}

// Logf implements TB (the fixture's logs are for failed tests).
func (r *Run) Logf(string, ...any) {}

// Cleanup implements TB.
func (r *Run) Cleanup(fn func()) { r.cleanups = append(r.cleanups, fn) }

// Failed implements TB.
func (r *Run) Failed() bool { return r.failed }

// TempDir implements TB: a new directory, removed at Close.
func (r *Run) TempDir() string {
	dir, err := os.MkdirTemp("", "arssh")
	if err != nil {
		r.Fatal(err)
	}
	r.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Close runs the cleanups, the last registered first.
func (r *Run) Close() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}

// Recover, deferred, turns a failure of the fixture into *err (any other
// panic goes on).
func (r *Run) Recover(err *error) {
	if p := recover(); p != nil {
		if re, ok := p.(RunError); ok {
			*err = re.Err
			return
		}
		panic(p)
	}
}
