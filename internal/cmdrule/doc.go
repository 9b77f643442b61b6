// Package cmdrule decides whether a shell command line may run without
// asking, from the user's allow and deny rules (terminal.approve).
//
// A line is parsed with a real shell parser (mvdan.cc/sh, the parser
// behind shfmt) into the simple commands it runs: through lists,
// pipelines, subshells, { } groups, if/for/while/case bodies, functions,
// command and process substitutions, and the scripts of sh -c, bash -c
// and the like. Each simple command is seen through the wrappers that
// run another program (command, builtin, env, sudo, doas, nohup, nice,
// time, timeout, xargs, exec, stdbuf, setsid, ionice, find -exec), and
// its program is named by its base name (/bin/rm is rm).
//
// The decision (Rules.Decide) is the same wherever a command comes from:
// any simple command a deny rule matches refuses the line; the line runs
// unasked only when every simple command is allowed (by a rule, an
// answer the user remembered, or as one of the few harmless builtins);
// a line with a part whose program cannot be known before it runs (a
// variable or substitution in command position, eval, a computed
// source, a line that does not parse) is never allowed by a rule.
//
// A rule is one simple command written as a shell line: its words match
// the command's words, `*` matches any text within a word, a lone `*`
// any number of words, and a last word ending in `*` also any words
// after it ("git status*" matches "git status --short", never the
// "rm -rf x" of "git status; rm -rf x"). Redirections that write files
// must be allowed by the rule too.
package cmdrule
