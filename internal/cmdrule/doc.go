// Package cmdrule decides whether a shell command line may run without
// asking, from the user's allow and deny rules (terminal.approve).
//
// A line is parsed in the dialect of the shell that runs it
// (internal/lineshell: bash --noprofile --norc -c for agentrun's
// terminals, POSIX sh where bash is missing; AnalyzeIn names another;
// AnalyzeArgv reads an argv run without a shell word by word) with a real
// shell parser (mvdan.cc/sh, the parser behind shfmt) into the simple
// commands it runs: through lists, pipelines, subshells, { } groups,
// if/for/while/case bodies, functions, command and process substitutions,
// here-documents, and the scripts of sh -c, bash -c, eval, trap, watch,
// flock -c, script -c and su -c (a script whose shell is not known, sh
// or $SHELL, is read both as bash and as POSIX sh). Each simple command
// is seen through the wrappers that run another program (the wrappers
// table in wrappers.go names each: env with -S and -C, sudo, find -exec,
// xargs …; doc/agentrun.txt lists them for the user, and
// TestWrappersAreDocumented keeps that list whole), their options read
// as each program's getopt reads them, and its program is named by its
// base name (/bin/rm is rm).
//
// It fails closed (understood.go): every node of the line must be in an
// explicit list of understood syntax, and every builtin in the list of
// understood builtins; anything else (arithmetic on variables, arrays
// and subscripts, ${x@P}, namerefs, [[ ]] with a substitution, unknown
// builtins, a sensitive assignment such as HOME=, PATH= or GIT_*=, a
// line with no command) is Unknown, which no rule or remembered answer
// can allow.
//
// The decision (Rules.Decide) is the same wherever a command comes from:
// any simple command a deny rule matches refuses the line; the line runs
// unasked only when nothing of it is Unknown and every simple command is
// allowed (by a rule, an answer the user remembered, or as one of the few
// builtins that change nothing, which the reason says as such, not as
// "allowed"); a line with a part whose program cannot be known before it
// runs (a variable or substitution in command position, eval, a computed
// source, a line that does not parse) is asked.
//
// A rule is one simple command written as a shell line: its words match
// the command's words, `*` matches any text within a word, a lone `*`
// any number of words, and a last word ending in `*` also any words
// after it ("git status*" matches "git status --short", never the
// "rm -rf x" of "git status; rm -rf x"). Redirections that write files
// must be allowed by the rule too.
//
// The differential property test (shelldiff_test.go) runs generated
// lines in the shell that runs them, with logging stubs for programs and
// the files traced, and checks every line decided "run" ran and wrote only
// what the rules allow.
package cmdrule
