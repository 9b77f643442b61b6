// Package shquote writes a command and its arguments as one POSIX shell
// line, for people to read (a split's title, an approval question, the
// audit log) and for a shell to run back unchanged.
package shquote
