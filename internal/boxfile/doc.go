// Package boxfile finds and reads, for Lua's "read_files" request, the
// files a command's output names on the machine it ran on.
//
// A file named in the output of a command that ran on another machine
// (a compiler's file:line) is that machine's: Lua asks its backend there
// for it ("read_files"), found as gf finds a file (from the command's
// directory, then below it), and shows it in a buffer named for the
// machine, never the local file at the same path.
package boxfile
