// Package testdeps is how a Go unit test says it needs something that
// make deps installs (bubblewrap, zsh, the npm test peers …): on a fresh
// clone's go test ./..., without make deps, such a test skips with one
// sentence naming what to install; under make test (AGENTRUN_DEPS=1,
// which the Makefile sets after make deps) a missing part fails the test,
// so a broken install step cannot hide behind a skip.
package testdeps
