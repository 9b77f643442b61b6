// Package demotest lets a package's test binary serve as the demo agent:
// its tests start it again as a real ACP peer, without building one.
package demotest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/agentrun/agentrun.nvim/internal/demoagent"
)

// Main is a TestMain: with env set to "1" the binary is the demo agent on
// its stdio; else it runs the tests.
func Main(m *testing.M, env string) {
	if os.Getenv(env) == "1" {
		if err := demoagent.Run(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
