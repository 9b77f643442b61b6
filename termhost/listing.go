package termhost

import (
	"reflect"
	"sync"

	"github.com/agentrun/agentrun.nvim/ahp"
)

// rootListing is the Host's AHP root terminal listing. It is rebuilt whole
// when a terminal is created or released, or its title, claim or exit
// changes, and replaced whole for watchers (root/terminalsChanged), so a
// watcher only ever needs the newest one.
type rootListing struct {
	mu      sync.Mutex // held while rebuilding, so rebuilds apply in order
	list    []ahp.TerminalInfo
	changed chan struct{} // closed at the next change; nil until someone waits
}

// Listing returns the root terminal listing: one entry per live (not
// released) terminal, oldest first.
func (h *Host) Listing() []ahp.TerminalInfo {
	list, _ := h.WatchListing()
	return list
}

// WatchListing returns the listing and a channel closed when it next
// changes; then call it again for the new listing (the
// root/terminalsChanged that replaces the old one whole).
func (h *Host) WatchListing() ([]ahp.TerminalInfo, <-chan struct{}) {
	r := &h.root
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return cloneListing(r.list), r.changed
}

// listingChanged rebuilds the listing and wakes its watchers if it
// differs. Lock order: root.mu, then h.mu, then each terminal's AHP lock;
// callers hold none of them.
func (h *Host) listingChanged() {
	r := &h.root
	r.mu.Lock()
	defer r.mu.Unlock()
	terms := h.Terminals()
	list := make([]ahp.TerminalInfo, 0, len(terms))
	for _, t := range terms {
		ports := t.listedPorts()
		replacedBy := t.ReplacedBy()
		t.live.mu.Lock()
		info := t.live.state.Info(t.live.uri)
		info.CreatedAt = t.started.UnixMilli()
		info.Command = t.cmdline
		info.RunOf, info.Run, info.ReplacedBy = t.spec.RunOf, t.spec.Run, replacedBy
		if len(ports) > 0 && !t.live.state.Exited() {
			info.Ports = ports // a command that ended listens on nothing
		}
		list = append(list, info)
		t.live.mu.Unlock()
	}
	if reflect.DeepEqual(list, r.list) {
		return
	}
	r.list = list
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

func cloneListing(list []ahp.TerminalInfo) []ahp.TerminalInfo {
	out := make([]ahp.TerminalInfo, len(list))
	for i, ti := range list {
		out[i] = ti.Clone()
	}
	return out
}
