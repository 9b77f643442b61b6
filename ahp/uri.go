package ahp

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// terminalURIPrefix is how agentrun names terminals as AHP resources.
const terminalURIPrefix = "agenthost:/terminal/"

// ShortID is terminal id without the "@site" that a backend on another
// machine ends its ids with ("term-3@devbox": "term-3"): under a name
// that says the machine already (ssh://devbox/PID:term-3), the site would
// say it twice. Within one host, ids and their short forms are one to one
// (the host adds the same site to every id).
func ShortID(id string) string {
	base, _, _ := strings.Cut(id, "@")
	return base
}

// TerminalURI returns the AHP resource URI of the terminal with id.
func TerminalURI(id string) string { return terminalURIPrefix + url.PathEscape(id) }

// TerminalID returns the terminal id in an AHP terminal URI.
func TerminalID(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, terminalURIPrefix)
	if !ok || rest == "" {
		return "", fmt.Errorf("terminal uri %q does not start with %q", uri, terminalURIPrefix)
	}
	id, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("terminal uri %q: %w", uri, err)
	}
	return id, nil
}

// FileURI returns the file URI of an absolute path ("file:///a%20b").
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.Clean(path)}).String()
}

// FilePath returns the absolute path a local file URI names.
func FilePath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("cwd uri %q: %w", uri, err)
	}
	if u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) {
		return "", fmt.Errorf("cwd uri %q is not a local file:// URI with an absolute path", uri)
	}
	return u.Path, nil
}
