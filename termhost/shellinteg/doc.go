// Package shellinteg is both ends of shell integration. It injects
// agentrun's scripts into bash and zsh, which make the shell report its
// prompt, each command line, the command's exit status and the working
// directory through OSC 633 and OSC 7; and it reads such reports from the
// output of any shell: Filter cuts the markers out of a terminal's stream
// (filter.go) and Parser turns them into AHP actions
// (terminal/commandExecuted, commandFinished, cwdChanged; osc.go).
//
// The injection is the one VS Code made common, with scripts of our own:
//
//   - bash: `bash --init-file <dir>/agentrun.bash -i`. --init-file replaces
//     ~/.bashrc, so the script sources ~/.bashrc first, then adds a DEBUG
//     trap (preexec) and PROMPT_COMMAND hooks (or joins bash-preexec).
//   - zsh: ZDOTDIR=<dir>/zsh, whose .zshenv, .zprofile and .zshrc run the
//     user's own files with ZDOTDIR restored, then add precmd/preexec hooks.
//
// A random nonce travels in AGENTRUN_NONCE; the scripts take it out of the
// environment before any user code runs and append it to each OSC 633;E
// command line, so output of a program cannot pose as a command line.
// Prepare writes the scripts (embedded in the binary) into a directory the
// caller owns and returns the argv and environment to start the shell with.
package shellinteg
