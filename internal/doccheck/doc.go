// Package doccheck holds no code, only a test: TestCommentsNameFilesThatExist
// reads every Go and Lua file of the repository and fails when a comment
// names a .go or .lua file (main.go, internal/editor/linger.go) that the repository
// does not have, so that comments pointing at a file keep up with renames.
package doccheck
