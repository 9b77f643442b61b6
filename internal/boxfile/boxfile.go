package boxfile

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Args is what "read_files" is asked: paths as the output names
// them, and the directories to look in (the command's, the session's;
// none: the home directory).
type Args struct {
	Paths []string `msgpack:"paths"`
	Dirs  []string `msgpack:"dirs"`
}

// File is one path's answer: the file found (absolute) and its lines,
// or why not (not found, too big, not text).
type File struct {
	Path  string   `msgpack:"path"`
	File  string   `msgpack:"file,omitempty"`
	Lines []string `msgpack:"lines"`
	Error string   `msgpack:"error,omitempty"`
}

// maxBoxFile bounds a file read for Lua (a source file; not a data file).
const maxBoxFile = 8 << 20

// findDepth and findLimit bound the search below the directories (as
// gf's findfile(path, dir/**4)).
const (
	findDepth = 4
	findLimit = 20000
)

// Read ("read_files", its first argument the terminal or session
// whose output named the paths, for the routing to this machine) finds
// and reads each path on this machine.
func Read(_ string, args Args) ([]File, error) {
	dirs := args.Dirs
	if len(dirs) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			dirs = []string{home}
		}
	}
	out := make([]File, 0, len(args.Paths))
	for _, p := range args.Paths {
		f := File{Path: p, Lines: []string{}}
		file := findFile(p, dirs)
		if file == "" {
			f.Error = fmt.Sprintf("%s is not a file in %s or below it", p, strings.Join(dirs, ", "))
			out = append(out, f)
			continue
		}
		f.File = file
		f.Lines, f.Error = readLines(file)
		out = append(out, f)
	}
	return out, nil
}

// findFile finds path: absolute (or ~/…) as it is, else in dirs, then
// below them; "" when not found.
func findFile(path string, dirs []string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, rest)
		}
	}
	isFile := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	if filepath.IsAbs(path) {
		if isFile(path) {
			return filepath.Clean(path)
		}
		return ""
	}
	for _, d := range dirs {
		if p := filepath.Join(d, path); isFile(p) {
			return p
		}
	}
	for _, d := range dirs {
		seen := 0
		var found string
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			seen++
			if err != nil || seen > findLimit {
				return filepath.SkipDir
			}
			if e.IsDir() {
				rel, _ := filepath.Rel(d, p)
				if rel != "." && strings.Count(rel, string(filepath.Separator))+1 > findDepth {
					return filepath.SkipDir
				}
				if c := filepath.Join(p, path); p != d && isFile(c) {
					found = c
					return filepath.SkipAll
				}
			}
			return nil
		})
		if found != "" {
			return found
		}
	}
	return ""
}

// readLines reads file as lines, or says why not.
func readLines(file string) ([]string, string) {
	fi, err := os.Stat(file)
	if err != nil {
		return []string{}, fmt.Sprintf("%s cannot be read: %v", file, err)
	}
	if fi.Size() > maxBoxFile {
		return []string{}, fmt.Sprintf("%s is %d MiB, more than the %d MiB read over the link", file, fi.Size()>>20, maxBoxFile>>20)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return []string{}, fmt.Sprintf("%s cannot be read: %v", file, err)
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return []string{}, fmt.Sprintf("%s is not a text file", file)
	}
	text := strings.TrimSuffix(string(data), "\n")
	return strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n"), ""
}
