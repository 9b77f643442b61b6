// Package rundir is where agentrun's hosts put their sockets: one private
// directory per user ($XDG_RUNTIME_DIR/agentrun, else agentrun/run under
// the user's cache directory), mode 0700 and owned by the user, checked
// every time it is used, so no other user can reach a socket in it or
// put one there.
package rundir
