// Package rpcline is a JSON-RPC object stream of one JSON object per line
// (what jsonrpc2's plain stream speaks) with two shortcuts the AHP host
// and its clients need under a flood of output: a writer can send a line
// it encoded once for many connections, and a reader can take the lines
// it decodes faster itself (an action notification) before jsonrpc2
// decodes them the general way.
package rpcline
