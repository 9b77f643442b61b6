// Package checkpoint makes and reads the checkpoints of a session's
// turns (Lua's "checkpoint" request, routed by the editor bridge).
//
// A checkpoint is a git tree object of a session's folder as it is,
// before and after each turn, so that :AgentReview and :AgentRewind see
// what the agent changed whichever way it did (our fs writes, its own
// edit tools, its commands). Lua asks the backend of the machine the
// session runs on ("checkpoint", routed by the session's id), so a
// session on another machine has its files checkpointed, reviewed and
// put back there, over the same link.
//
// In a git work tree the tree is made with `git add -A` into agentrun's
// own index file (the user's index, stash and refs are never touched);
// the blobs go into the repository's object store, referenced by
// nothing. Outside git the folder gets a git directory of its own under
// the state folder (<base>/<folder>.git, the copies), kept within a
// size budget: stores not used for keptStoreAge are removed, then the
// least recently used ones while the stores are over the budget.
package checkpoint
