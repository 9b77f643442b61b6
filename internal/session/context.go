package session

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Context from the editor in a prompt (#buffer, #selection, @path): Lua
// says what it refers to; here it becomes ACP content as the agent can
// take it: the text embedded (a resource) when it announced
// embeddedContext, else a link to the file. An image (@shot.png) goes as
// an image block when the agent takes images, else as a link.

// contextItem is one piece of context Lua found in a prompt.
type contextItem struct {
	Kind string `msgpack:"kind"` // "buffer", "selection", "file" or "image"
	Path string `msgpack:"path"` // absolute
	// Text is the buffer's or selection's current text (unsaved edits
	// included); a file is read here.
	Text      string `msgpack:"text"`
	StartLine int    `msgpack:"start_line"` // a selection's lines (1-based)
	EndLine   int    `msgpack:"end_line"`
	Filetype  string `msgpack:"filetype"`
}

// maxContextFile bounds a file embedded with @path; maxImage an image.
const (
	maxContextFile = 1 << 20
	maxImage       = 5 << 20
)

// imageTypes are the images a prompt sends, by extension.
var imageTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}

// promptCaps is what the agent's prompts take besides text.
type promptCaps struct{ embedded, image bool }

// promptBlocks turns the prompt's text and context into content blocks.
func promptBlocks(text string, items []contextItem, caps promptCaps) ([]acpsdk.ContentBlock, error) {
	blocks := []acpsdk.ContentBlock{acpsdk.TextBlock(text)}
	for _, it := range items {
		if !filepath.IsAbs(it.Path) {
			return nil, fmt.Errorf("context %s: %q is not an absolute path", it.Kind, it.Path)
		}
		uri := (&url.URL{Scheme: "file", Path: it.Path}).String()
		name := filepath.Base(it.Path)
		if mt, ok := imageTypes[strings.ToLower(filepath.Ext(it.Path))]; ok && it.Kind == "file" {
			if !caps.image {
				blocks = append(blocks, acpsdk.ResourceLinkBlock(name, uri))
				continue
			}
			data, err := readImage(it.Path)
			if err != nil {
				return nil, err
			}
			img := acpsdk.ImageBlock(data, mt)
			img.Image.Uri = &uri
			blocks = append(blocks, img)
			continue
		}
		if it.Kind == "selection" && it.StartLine > 0 {
			uri += fmt.Sprintf("#L%d-L%d", it.StartLine, it.EndLine)
			name += fmt.Sprintf(":%d-%d", it.StartLine, it.EndLine)
		}
		if !caps.embedded {
			blocks = append(blocks, acpsdk.ResourceLinkBlock(name, uri))
			continue
		}
		body := it.Text
		if it.Kind == "file" {
			b, err := readContextFile(it.Path)
			if err != nil {
				return nil, err
			}
			body = b
		}
		res := &acpsdk.TextResourceContents{Uri: uri, Text: body}
		if mt := mimeType(it); mt != "" {
			res.MimeType = &mt
		}
		blocks = append(blocks, acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{TextResourceContents: res}))
	}
	return blocks, nil
}

// readImage reads an image named with @path, base64-encoded.
func readImage(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("@%s: %w", path, err)
	}
	if fi.Size() > maxImage {
		return "", fmt.Errorf("@%s is %d bytes, more than the %d an image in a prompt may have", path, fi.Size(), maxImage)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("@%s: %w", path, err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// readContextFile reads a file named with @path as text.
func readContextFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("@%s: %w", path, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("@%s is a directory; name a file", path)
	}
	if fi.Size() > maxContextFile {
		return "", fmt.Errorf("@%s is %d bytes, more than the %d a prompt takes", path, fi.Size(), maxContextFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("@%s: %w", path, err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("@%s is not text", path)
	}
	return string(b), nil
}

// knownTypes are the registered media types of filetypes and extensions
// that have one; other text is "text/x-" and its filetype.
var knownTypes = map[string]string{
	"text": "text/plain", "txt": "text/plain", "log": "text/plain",
	"markdown": "text/markdown", "md": "text/markdown",
	"html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
	"javascript": "text/javascript", "js": "text/javascript", "mjs": "text/javascript",
	"json": "application/json", "xml": "application/xml", "yaml": "application/yaml", "yml": "application/yaml",
	"toml": "application/toml", "sql": "application/sql",
}

// mimeType names text by the buffer's filetype or the file's extension.
func mimeType(it contextItem) string {
	ft := it.Filetype
	if ft == "" {
		ft = strings.ToLower(strings.TrimPrefix(filepath.Ext(it.Path), "."))
	}
	if ft == "" {
		return "text/plain"
	}
	if mt, ok := knownTypes[ft]; ok {
		return mt
	}
	return "text/x-" + ft
}
