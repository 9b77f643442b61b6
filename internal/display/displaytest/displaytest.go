// Package displaytest holds what the tests of the parts that start
// displays share: a Neovim's channels, recorded.
package displaytest

import (
	"bytes"
	"sync"
)

// Channels records what displays send to each Neovim channel.
type Channels struct {
	mu  sync.Mutex
	out map[int]*bytes.Buffer
}

// Send is what a display writes to Neovim channel ch.
func (c *Channels) Send(ch int, p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out == nil {
		c.out = map[int]*bytes.Buffer{}
	}
	if c.out[ch] == nil {
		c.out[ch] = &bytes.Buffer{}
	}
	c.out[ch].Write(p)
	return nil
}

// Text is all channel ch got.
func (c *Channels) Text(ch int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out[ch] == nil {
		return ""
	}
	return c.out[ch].String()
}
