package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/agentrun/agentrun.nvim/ahp"
	"github.com/agentrun/agentrun.nvim/internal/jsonstr"
	"github.com/agentrun/agentrun.nvim/termhost"
)

// feed follows one terminal for every client: it reads the terminal's
// actions (a termhost subscription), keeps the server's copy of its state
// and gives each action a serverSeq.
type feed struct {
	uri   string
	term  *termhost.Terminal
	state ahp.TerminalState // as of the server's seq; guarded by s.mu
	gone  bool              // the terminal was released and cleaned up
}

// contentLimits bounds the server's copy of a terminal's content, as
// termhost bounds its own.
var contentLimits = ahp.ContentLimits{MaxBytes: ahp.DefaultContentBytes, MaxParts: ahp.DefaultContentParts}

// feedLocked returns the feed of terminal uri, starting it (s.mu held);
// nil when there is no such live terminal.
func (s *Server) feedLocked(uri string) *feed {
	if f := s.feeds[uri]; f != nil {
		return f
	}
	id, err := ahp.TerminalID(uri)
	if err != nil {
		return nil
	}
	t, err := s.host.Get(id)
	if err != nil {
		return nil
	}
	st, sub := t.Subscribe()
	f := &feed{uri: uri, term: t, state: st}
	f.state.Trim(contentLimits)
	s.feeds[uri] = f
	s.feedsWG.Add(1)
	go s.runFeed(s.feedsCtx, f, sub)
	return f
}

// runFeed publishes the terminal's actions until it is gone.
func (s *Server) runFeed(ctx context.Context, f *feed, sub *termhost.Subscription) {
	defer s.feedsWG.Done()
	defer sub.Close()
	for {
		acts, resync, err := sub.Next(ctx)
		if err != nil {
			s.mu.Lock()
			f.gone = true
			delete(s.feeds, f.uri)
			s.mu.Unlock()
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				s.opts.Logf("ahp server: following %s: %v", f.uri, err)
			}
			return
		}
		s.mu.Lock()
		if resync != nil {
			// The feed fell further behind than termhost keeps: its
			// clients cannot follow by actions. They are disconnected and
			// get a snapshot when they reconnect.
			f.state = *resync
			f.state.Trim(contentLimits)
			for c := range s.conns {
				if c.subs[f.uri] {
					go c.rpc.Close()
				}
			}
			s.opts.Logf("ahp server: %s: fell behind the terminal; its subscribers reconnect for a snapshot", f.uri)
		}
		for _, sa := range coalesce(acts) {
			f.state.Apply(sa.Action)
			key := originKey{f.uri, sa.Seq}
			origin, ok := s.origins[key]
			delete(s.origins, key)
			var o *ahp.Origin
			if ok {
				o = &origin
			}
			s.publishLocked(f.uri, sa.Action, o)
		}
		if len(acts) > 0 {
			f.state.Trim(contentLimits)
		}
		s.mu.Unlock()
	}
}

// coalesce joins runs of terminal/data in a batch into one action each:
// appending the joined data is the same as appending each (the reducer's
// rule), and under a flood it makes far fewer messages for every client.
func coalesce(acts []termhost.SeqAction) []termhost.SeqAction {
	out := make([]termhost.SeqAction, 0, len(acts))
	for i := 0; i < len(acts); {
		d, isData := acts[i].Action.(ahp.DataAction)
		j := i + 1
		for isData && j < len(acts) {
			if n, ok := acts[j].Action.(ahp.DataAction); !ok || n.Terminal != d.Terminal {
				break
			}
			j++
		}
		if j == i+1 {
			out = append(out, acts[i])
			i++
			continue
		}
		var b strings.Builder
		for _, sa := range acts[i:j] {
			b.WriteString(sa.Action.(ahp.DataAction).Data)
		}
		d.Data = b.String()
		out = append(out, termhost.SeqAction{Seq: acts[j-1].Seq, Action: d})
		i = j
	}
	return out
}

// publishLocked gives act the next serverSeq, logs it for reconnects and
// queues it for every client subscribed to resource (s.mu held).
func (s *Server) publishLocked(resource string, act ahp.Action, origin *ahp.Origin) {
	s.seq++
	env := &ahp.Envelope{Action: act, ServerSeq: s.seq, Origin: origin}
	size := envelopeSize(act)
	s.log.add(logged{resource: resource, env: env, bytes: size})
	var line []byte // the notification, encoded once for every subscriber
	for c := range s.conns {
		if !c.subs[resource] {
			continue
		}
		if line == nil {
			var err error
			if line, err = notificationLine(env); err != nil {
				s.opts.Logf("ahp server: encoding %s: %v", act.ActionType(), err)
				return
			}
		}
		c.push(outgoing{line: line, bytes: len(line)})
	}
}

// notificationLine is the whole JSON-RPC notification carrying env.
// terminal/data (nearly everything a flood sends) is written in one pass
// (encoding/json would scan the data once per MarshalJSON layer).
func notificationLine(env *ahp.Envelope) ([]byte, error) {
	if d, ok := env.Action.(ahp.DataAction); ok && env.Origin == nil && env.RejectionReason == "" {
		line := make([]byte, 0, len(ahp.ActionLinePrefix)+len(ahp.DataLinePrefix)+len(d.Terminal)+len(d.Data)+len(d.Data)/4+64)
		line = append(line, ahp.ActionLinePrefix...)
		line = append(line, ahp.DataLinePrefix...)
		line = jsonstr.AppendString(line, []byte(d.Terminal))
		line = append(line, `,"data":`...)
		line = jsonstr.AppendString(line, []byte(d.Data))
		line = append(line, `},"serverSeq":`...)
		line = strconv.AppendUint(line, env.ServerSeq, 10)
		return append(line, "}}}"...), nil
	}
	params, err := json.Marshal(ahp.ActionParams{Envelope: *env})
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(ahp.ActionLinePrefix)+len(params)+1)
	line = append(line, ahp.ActionLinePrefix...)
	line = append(line, params...)
	return append(line, '}'), nil
}

// envelopeSize estimates an envelope's encoded size (its data dominates).
func envelopeSize(act ahp.Action) int {
	if d, ok := act.(ahp.DataAction); ok {
		return len(d.Data) + 128
	}
	return 256
}

// watchRoot publishes root/terminalsChanged whenever the listing changes.
func (s *Server) watchRoot(ctx context.Context) {
	for {
		list, changed := s.host.WatchListing()
		s.mu.Lock()
		s.rootIsLocked(list)
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// rootIsLocked makes the root listing list, publishing the change (s.mu
// held). watchRoot calls it when the host's listing changed, and a
// snapshot of the root first, so a client that connects just after a
// terminal was created sees it (the watcher may not have run yet).
func (s *Server) rootIsLocked(list []ahp.TerminalInfo) {
	present := s.presentLocked()
	for i, ti := range list {
		c := ti.Claim
		list[i].HolderGone = c.Kind == ahp.ClaimClient && c.ClientID != ahp.DetachedClient && !present[c.ClientID]
	}
	if !sameListing(s.root.Terminals, list) {
		s.root.Terminals = list
		s.publishLocked(ahp.RootURI, ahp.RootTerminalsChangedAction{Terminals: list}, nil)
	}
}

func sameListing(a, b []ahp.TerminalInfo) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// logged is one envelope the replay log keeps.
type logged struct {
	resource string
	env      *ahp.Envelope
	bytes    int
}

// replayLog keeps the newest envelopes, bounded in number and bytes.
type replayLog struct {
	items   []logged
	bytes   int
	dropped uint64 // the newest serverSeq no longer kept
}

func (l *replayLog) add(e logged) {
	l.items = append(l.items, e)
	l.bytes += e.bytes
	drop := 0
	for len(l.items)-drop > replayEnvelopes || l.bytes > replayBytes && drop < len(l.items)-1 {
		l.bytes -= l.items[drop].bytes
		drop++
	}
	if drop > 0 {
		l.dropped = l.items[drop-1].env.ServerSeq
		l.items = append([]logged(nil), l.items[drop:]...)
	}
}

// since returns the envelopes after seq for the resources in subs, and
// whether the log still holds everything after seq.
func (l *replayLog) since(seq uint64, subs map[string]bool) ([]ahp.Envelope, bool) {
	if seq < l.dropped {
		return nil, false
	}
	var out []ahp.Envelope
	for _, it := range l.items {
		if it.env.ServerSeq > seq && subs[it.resource] {
			out = append(out, *it.env)
		}
	}
	return out, true
}
