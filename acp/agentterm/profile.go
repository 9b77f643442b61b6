package agentterm

import (
	"sort"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// One profile per agent, each in a file of its own (profile_<key>.go):
// doc.go says what a profile holds, how its hooks are called and how one
// is added.

// profile is one agent's ways. Every field but key and name is optional:
// a nil hook is a quirk the agent does not have.
type profile struct {
	// key names its file and fixtures: profile_<key>.go,
	// tests/testdata/agentterm/<key>*.jsonl.
	key string
	// name is the agent's name for people ("Claude Code").
	name string
	// agentNames are initialize's agentInfo.name values it goes by;
	// nameContains, when set, takes any other name holding it (its forks).
	agentNames   []string
	nameContains string

	// ourTerminals: with no `terminals` option, its commands run in
	// agentrun's terminals (it is offered our MCP tool and sessionMeta
	// turns its own shell off); the others run commands their own way.
	ourTerminals bool
	// sessionMeta is what session/new's _meta carries for it, given our
	// tools' full names (mcp__agentrun__<tool>), when it is offered them.
	sessionMeta func(ourTools []string) map[string]any
	// mcpHTTPOnly: it refuses a stdio MCP server from the client and takes
	// an HTTP one (when its initialize declares mcpCapabilities.http).
	mcpHTTPOnly bool
	// noOutput says, once a session, in the split of its first command
	// that sent no output, why and how to see its commands' output, given
	// the agent's name in the user's config and why agentrun kept its own
	// shell for the session ("" when not known).
	noOutput func(configName, shellKept string) string
	// toolNotTaken is said after "did not take agentrun's terminal tool",
	// given the agent's name in the user's config.
	toolNotTaken func(configName string) string
	// asksFirst says whether its mode modeID asks before it acts; nil:
	// read from what the mode says of itself.
	asksFirst func(modeID string) bool
	// mcpToolCallKey is the key of an MCP tools/call's _meta under which
	// it puts the ACP tool call's toolCallId.
	mcpToolCallKey string
	// keepsReporting: it goes on reporting a command after its turn was
	// cancelled (the command goes on too), so only the command's own end
	// ends the split.
	keepsReporting bool

	// The hooks of decode.go's decoder, in the order it calls them.

	// outputAtEnd: the update is of a tool call whose terminal output
	// comes once, at its end, and may be the model's text for a command
	// that did not run (held until the next update says which).
	outputAtEnd func(u *toolUpdate) bool
	// notCommand: the update's tool call is no command known only from
	// its tool call, whatever its kind (the agent shows its commands in
	// terminal _meta).
	notCommand func(u *toolUpdate) bool
	// command names the command line of a tool call that did not (from
	// its text); ok false when the update does not.
	command func(u *toolUpdate) (line string, ok bool)
	// cwd is the command's directory when its rawInput did not say.
	cwd func(u *toolUpdate) string
	// notRun says why the command did not run to its end, when the update
	// says so instead of an exit ("" otherwise).
	notRun func(u *toolUpdate) string
	// placeholderTitle is a title its terminals get before the command's
	// (not shown).
	placeholderTitle string
	// finalOutput reads the output of a command known only from its tool
	// call from the final update (u.final), when it is not the text
	// content as is; cancelled: the agent killed it at a cancel.
	finalOutput func(u *toolUpdate) (output string, cancelled, ok bool)
	// trailer cuts the agent's own note after the output off the text
	// (read for the exit code, not shown); ok false when there is none.
	trailer func(text string) (output, note string, ok bool)
	// end reads how a command known only from its tool call ended, when
	// it did not exit with a code (cancelled, a signal, cut short).
	end func(u *toolUpdate) (ending, bool)
	// exitCode reads the exit code from rawOutput in a shape of the
	// agent's own, with the output that came with it.
	exitCode func(rawOutput any) (code int, output string, ok bool)

	// outputKeys are _meta keys besides terminal_output whose {data} is
	// terminal output to append.
	outputKeys []string
	// permissionAsked reads a permission request about tool call tc of
	// session sid before the user answers it.
	permissionAsked func(at *Decoder, sid string, tc acpsdk.ToolCallUpdate)
	// permissionAllowed is called when the user allowed it; it returns
	// the events of a split it opens.
	permissionAllowed func(at *Decoder, sid string, tc acpsdk.ToolCallUpdate) []Event
}

// ending is how a command ended without an exit code.
type ending struct {
	notRun, signal string
	failed         bool
}

// toolUpdate is one v1 tool_call or tool_call_update as the hooks read
// it.
type toolUpdate struct {
	call, title string
	meta        map[string]any
	content     []acpsdk.ToolCallContent
	text        string // the text of its text content
	status      acpsdk.ToolCallStatus
	rawOutput   any
	rawInput    any
	kind        acpsdk.ToolKind
	final       bool // status completed or failed
}

// profiles is every known profile, in the order of their keys; written
// only by the profiles' init functions.
var profiles []*profile

// register adds p to the known profiles (from its file's init).
func register(p *profile) {
	profiles = append(profiles, p)
	sort.Slice(profiles, func(i, j int) bool { return profiles[i].key < profiles[j].key })
}

// profileNamed is the profile of the agent that calls itself name
// (initialize's agentInfo.name): by one of its names, else by the part of
// a name it holds; nil when none.
func profileNamed(name string) *profile {
	if name == "" {
		return nil
	}
	for _, p := range profiles {
		for _, n := range p.agentNames {
			if n == name {
				return p
			}
		}
	}
	for _, p := range profiles {
		if p.nameContains != "" && strings.Contains(name, p.nameContains) {
			return p
		}
	}
	return nil
}

// ToolCallOfMCPCall is the ACP tool call an agent's MCP tools/call was
// made for, read from the call's _meta under a known agent's key ("" when
// none is there).
func ToolCallOfMCPCall(meta map[string]any) string {
	for _, p := range profiles {
		if p.mcpToolCallKey == "" {
			continue
		}
		if id, _ := meta[p.mcpToolCallKey].(string); id != "" {
			return id
		}
	}
	return ""
}

// Profile is what agentrun knows of an agent, by the name it gives itself
// in initialize. The zero Profile is an agent with no known ways.
type Profile struct{ p *profile }

// ProfileOf returns the profile of the agent that answered initialize
// with info (the zero Profile when it is not a known agent).
func ProfileOf(info acpsdk.InitializeResponse) Profile {
	if info.AgentInfo == nil {
		return Profile{}
	}
	return ProfileNamed(info.AgentInfo.Name)
}

// ProfileNamed returns the profile of the agent whose agentInfo.name is
// name (the zero Profile when none).
func ProfileNamed(name string) Profile { return Profile{profileNamed(name)} }

// Name is the agent's name for people ("" for an unknown agent).
func (p Profile) Name() string {
	if p.p == nil {
		return ""
	}
	return p.p.name
}

// OurTerminals reports whether, with no `terminals` option, the agent's
// commands run in agentrun's terminals (through our MCP tool).
func (p Profile) OurTerminals() bool { return p.p != nil && p.p.ourTerminals }

// MCPHTTPOnly reports whether the agent refuses a stdio MCP server from
// the client but takes an HTTP one.
func (p Profile) MCPHTTPOnly() bool { return p.p != nil && p.p.mcpHTTPOnly }

// SessionMeta is what session/new's _meta carries for the agent when it
// is offered our tools (their full names); nil when nothing.
func (p Profile) SessionMeta(ourTools []string) map[string]any {
	if p.p == nil || p.p.sessionMeta == nil {
		return nil
	}
	return p.p.sessionMeta(ourTools)
}

// ToolNotTaken is what to add when the agent (configName in the user's
// config) did not take our tool: why it may not have, and what to do;
// "" when nothing is known.
func (p Profile) ToolNotTaken(configName string) string {
	if p.p == nil || p.p.toolNotTaken == nil {
		return ""
	}
	return p.p.toolNotTaken(configName)
}

// AsksFirst says whether the agent's mode modeID asks before it acts;
// known is false when the profile does not say (read the mode's words).
func (p Profile) AsksFirst(modeID string) (asks, known bool) {
	if p.p == nil || p.p.asksFirst == nil {
		return false, false
	}
	return p.p.asksFirst(modeID), true
}
