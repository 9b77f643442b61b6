# agentrun shell integration for bash, loaded with `bash --init-file <this>`.
#
# It reports to agentrun, through escape sequences the terminal host strips
# from the display:
#   OSC 633;A / 633;B    around the prompt (PS1 is wrapped)
#   OSC 633;E;cmd;nonce  the command line about to run (nonce: AGENTRUN_NONCE)
#   OSC 633;C            the command starts
#   OSC 633;D;status     it finished with this exit status
#   OSC 633;P;Cwd=dir    and OSC 7 file://host/dir: the working directory
# In 633 fields "\" is written "\\" and ";" and control characters "\xHH".
# Written for agentrun; bash 4 or later.

# --init-file replaces ~/.bashrc, so this file reads it itself.
if [[ -n ${__agentrun_loaded-} ]]; then
	builtin return 0
fi
__agentrun_loaded=1

# Take the nonce out of the environment before any user code runs, so
# that programs started from this shell cannot forge command lines.
__agentrun_nonce=${AGENTRUN_NONCE-}
builtin unset AGENTRUN_NONCE

if [[ -r ~/.bashrc ]]; then
	builtin source ~/.bashrc
fi

# Only an interactive shell has prompts to mark.
case $- in
*i*) ;;
*) builtin return 0 ;;
esac

# __agentrun_escape sets __agentrun_escaped to $1 escaped for a 633 field.
__agentrun_escape() {
	local LC_ALL=C s=$1 out= ch i
	s=${s//\\/\\\\}
	s=${s//;/\\x3b}
	if [[ $s == *[[:cntrl:]]* ]]; then
		for ((i = 0; i < ${#s}; i++)); do
			ch=${s:i:1}
			if [[ $ch == [[:cntrl:]] ]]; then
				builtin printf -v ch '\\x%02x' "'$ch"
			fi
			out+=$ch
		done
		s=$out
	fi
	__agentrun_escaped=$s
}

# __agentrun_urlencode sets __agentrun_urlencoded to path $1 percent-encoded.
__agentrun_urlencode() {
	local LC_ALL=C s=$1 out= ch i
	for ((i = 0; i < ${#s}; i++)); do
		ch=${s:i:1}
		case $ch in
		[a-zA-Z0-9/._~-]) out+=$ch ;;
		*) builtin printf -v ch '%%%02X' "'$ch"; out+=$ch ;;
		esac
	done
	__agentrun_urlencoded=$out
}

# __agentrun_histnum is the number of the newest history entry when the
# last command line was taken from history, to tell a new entry from an
# old one (HISTCONTROL may keep a command out of the history).
__agentrun_histnum=
__agentrun_running=
__agentrun_at_prompt=

# __agentrun_command_line sets __agentrun_line to what the user typed:
# the newest history entry if it is new, else BASH_COMMAND (the first
# simple command, aliases expanded) as the best we know.
__agentrun_command_line() {
	local entry
	entry=$(HISTTIMEFORMAT= builtin history 1 2>/dev/null)
	if [[ $entry =~ ^\ *([0-9]+)\*?\ \ (.*)$ ]] && [[ ${BASH_REMATCH[1]} != "$__agentrun_histnum" ]]; then
		__agentrun_histnum=${BASH_REMATCH[1]}
		__agentrun_line=${BASH_REMATCH[2]}
	else
		__agentrun_line=$1
	fi
}

# __agentrun_preexec runs before the first command of each line typed at
# the prompt (from the DEBUG trap or bash-preexec's preexec_functions).
__agentrun_preexec() {
	__agentrun_at_prompt=
	__agentrun_command_line "$1"
	__agentrun_escape "$__agentrun_line"
	builtin printf '\e]633;E;%s;%s\a\e]633;C\a' "$__agentrun_escaped" "$__agentrun_nonce"
	__agentrun_running=1
}

# __agentrun_debug_trap is the DEBUG trap: it fires before every simple
# command; only the first one after a prompt is a command the user typed.
__agentrun_debug_trap() {
	if [[ -n $__agentrun_at_prompt && $BASH_COMMAND != __agentrun_* ]]; then
		__agentrun_preexec "$BASH_COMMAND"
	fi
}

# __agentrun_precmd_first runs first before each prompt: it reports the
# finished command's status and hands that status on unchanged.
__agentrun_precmd_first() {
	local status=$?
	__agentrun_at_prompt=
	if [[ -n $__agentrun_running ]]; then
		__agentrun_running=
		builtin printf '\e]633;D;%s\a' "$status"
	fi
	builtin return "$status"
}

# __agentrun_precmd_last runs last before each prompt, after the user's
# own PROMPT_COMMAND (which may rebuild PS1): it reports the cwd and marks
# the prompt.
__agentrun_precmd_last() {
	local status=$?
	__agentrun_escape "$PWD"
	builtin printf '\e]633;P;Cwd=%s\a' "$__agentrun_escaped"
	__agentrun_urlencode "$PWD"
	builtin printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$__agentrun_urlencoded"
	if [[ $PS1 != *'\e]633;A\a'* ]]; then
		PS1='\[\e]633;A\a\]'"$PS1"'\[\e]633;B\a\]'
	fi
	if [[ -z $__agentrun_histnum ]]; then
		# First prompt (the history file is loaded by now): entries from
		# earlier sessions are not command lines typed in this one.
		__agentrun_command_line ""
		__agentrun_histnum=${__agentrun_histnum:-0}
	fi
	__agentrun_at_prompt=1
	builtin return "$status"
}

if [[ -n ${bash_preexec_imported-}${__bp_imported-} ]] && builtin declare -p preexec_functions >/dev/null 2>&1; then
	# bash-preexec owns the DEBUG trap and PROMPT_COMMAND; join it.
	precmd_functions=(__agentrun_precmd_first "${precmd_functions[@]}" __agentrun_precmd_last)
	preexec_functions+=(__agentrun_preexec)
else
	__agentrun_trap=$(builtin trap -p DEBUG)
	if [[ -z $__agentrun_trap ]]; then
		builtin trap '__agentrun_debug_trap' DEBUG
	elif [[ $__agentrun_trap != *__agentrun_debug_trap* ]]; then
		# Someone else's DEBUG trap (starship's preexec, a prompt
		# framework's): ours runs after it, so its "$_" is still the user's.
		__agentrun_trap=${__agentrun_trap#"trap -- '"}
		__agentrun_trap=${__agentrun_trap%"' DEBUG"}
		__agentrun_trap=${__agentrun_trap//"'\\''"/"'"}
		builtin trap -- "$__agentrun_trap"$'\n''__agentrun_debug_trap' DEBUG
	fi
	builtin unset __agentrun_trap
	if [[ $(builtin declare -p PROMPT_COMMAND 2>/dev/null) == "declare -a"* ]]; then
		PROMPT_COMMAND=(__agentrun_precmd_first "${PROMPT_COMMAND[@]}" __agentrun_precmd_last)
	else
		PROMPT_COMMAND="__agentrun_precmd_first
${PROMPT_COMMAND-}
__agentrun_precmd_last"
	fi
fi
