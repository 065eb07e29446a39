// Package nodetrust keeps which of a network's nodes the engine believes.
// The RPC clients (evmrpc, btcrpc) check what their nodes answer, and
// chainwatch checks the answers of one read against each other; a node
// whose answer fails a check is set aside for a while, which doubles at
// each failure in a row. The nodes are also compared: each reports the
// hash of one block a little below all their heads, and a node that
// disagrees with the majority is set aside until a comparison finds it
// with the others again. When no answer holds a majority (two nodes that
// disagree), none is used until one does: with two witnesses who
// contradict each other there is no telling which lies, and a payment
// waiting is better than one recorded from the wrong chain
// (docs/decisions.md, "Node answers are checked, not trusted").
//
// A network of one node never sets it aside, having no other to ask: an
// answer of it that fails a check fails the read that got it, which is
// retried.
package nodetrust

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrBadAnswer marks an answer that failed a check (BadAnswer). It is a
// retryable error of the read that got it, on another node or later;
// never a record.
var ErrBadAnswer = errors.New("a node's answer failed a check")

// BadAnswer is an answer that failed a check.
type BadAnswer struct {
	// Check names the check: block_hash, parent_link, receipt_block,
	// log_block, tx_hash, merkle_root, txid... (the metric's label).
	Check string
	// Detail says what the answer said.
	Detail string
}

// Bad is a BadAnswer of check, its detail formatted.
func Bad(check, format string, args ...any) *BadAnswer {
	return &BadAnswer{Check: check, Detail: fmt.Sprintf(format, args...)}
}

func (e *BadAnswer) Error() string {
	return "the node's answer failed a check (" + e.Check + "): " + e.Detail
}

// Is makes every BadAnswer an ErrBadAnswer.
func (e *BadAnswer) Is(target error) bool { return target == ErrBadAnswer }

// CheckOf names the check err failed, "" when it is no BadAnswer.
func CheckOf(err error) string {
	var b *BadAnswer
	if errors.As(err, &b) {
		return b.Check
	}
	return ""
}

// ErrDisagree says the network's nodes disagree and no answer holds a
// majority: none is used until a comparison finds one that does.
var ErrDisagree = errors.New("the network's nodes disagree and no answer holds a majority: none is used until they agree")

// ErrSetAside says every node of the network is set aside.
var ErrSetAside = errors.New("every node of the network is set aside: its answers failed checks or disagree with the others'")

// Reporter is told what changes, for the metrics (observability.NodeReport
// is one).
type Reporter interface {
	// AnswerRejected counts an answer of node that failed check.
	AnswerRejected(network, node, check string)
	// NodeSetAside says whether node is set aside now.
	NodeSetAside(network, node string, aside bool)
	// NodesDisagree says whether the network's nodes disagree with no
	// majority now.
	NodesDisagree(network string, disagree bool)
}

// The defaults of a Ledger's settings.
const (
	DefaultBackoff    = time.Minute
	DefaultMaxBackoff = time.Hour
)

// Ledger is what the engine believes of one network's nodes, by their
// index in the network's configuration. It is safe for concurrent use.
type Ledger struct {
	network string
	names   []string
	report  Reporter
	// Backoff is how long a node whose answer failed a check is set aside
	// the first time; the time doubles at each failure in a row, up to
	// MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Now is the clock, replaced in tests.
	Now func() time.Time

	mu    sync.Mutex
	nodes []node
	split bool
}

// node is what the ledger holds of one node.
type node struct {
	// until is when a node set aside for a failed check is asked again;
	// strikes counts its failures since it last agreed with the others.
	until   time.Time
	strikes int
	// minority says it disagreed with the majority at the last comparison.
	minority bool
	// aside says it was reported set aside; reason and since say why and
	// from when.
	aside  bool
	reason string
	since  time.Time
}

// New is the ledger of a network's nodes, named (for logs and metrics) by
// names, reporting to report (nil: to no one), which it tells at once that
// every node is used.
func New(network string, names []string, report Reporter) *Ledger {
	if report != nil {
		report.NodesDisagree(network, false)
		for _, n := range names {
			report.NodeSetAside(network, n, false)
		}
	}
	return &Ledger{network: network, names: names, report: report, Backoff: DefaultBackoff, MaxBackoff: DefaultMaxBackoff,
		nodes: make([]node, len(names))}
}

func (l *Ledger) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Usable reports whether node i may be asked now.
func (l *Ledger) Usable(i int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.nodes) < 2 {
		return true
	}
	l.refresh()
	return !l.split && !l.nodes[i].aside
}

// Failed records that an answer of node i failed a check (err, a
// BadAnswer): the node is set aside, unless it is the network's only one.
func (l *Ledger) Failed(i int, err error) {
	check := CheckOf(err)
	if check == "" {
		check = "other"
	}
	if l.report != nil {
		l.report.AnswerRejected(l.network, l.names[i], check)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.nodes) < 2 {
		slog.Error("rpc node's answer failed a check; the read is retried", "network", l.network, "node", l.names[i], "err", err)
		return
	}
	n := &l.nodes[i]
	now := l.now()
	n.strikes++
	d := l.backoff(n.strikes)
	n.until = now.Add(d)
	slog.Error("rpc node set aside: its answer failed a check; the read goes to the network's other nodes", "network", l.network,
		"node", l.names[i], "for", d.Round(time.Second), "err", err)
	l.setAside(i, err.Error())
}

// backoff is how long a node is set aside at its n-th failure in a row:
// Backoff doubled n-1 times, at most MaxBackoff, less a random tenth so
// that engines do not come back to a node together.
func (l *Ledger) backoff(n int) time.Duration {
	base, most := l.Backoff, l.MaxBackoff
	if base <= 0 {
		base = DefaultBackoff
	}
	most = max(most, base)
	d := base
	for k := 1; k < n && d < most; k++ {
		d *= 2
	}
	d = min(d, most)
	return d - rand.N(d/10+1)
}

// Voters are the nodes a comparison asks: all but those set aside for a
// failed check (a node known to lie has no vote), in order.
func (l *Ledger) Voters() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	now := l.now()
	var out []int
	for i := range l.nodes {
		if !l.nodes[i].until.After(now) {
			out = append(out, i)
		}
	}
	return out
}

// Vote records a comparison: what each node that answered says of one
// thing (what, "block 1234"). The nodes with the answer more than half of
// them give are used; the others are set aside until a comparison finds
// them with the majority again. With no majority (two nodes, or a tie),
// no node is used until a comparison finds one.
func (l *Ledger) Vote(what string, answers map[int]string) {
	if len(answers) == 0 {
		return
	}
	counts := map[string]int{}
	for _, a := range answers {
		counts[a]++
	}
	top, most := "", 0
	for _, a := range slices.Sorted(maps.Keys(counts)) {
		if counts[a] > most {
			top, most = a, counts[a]
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.nodes) < 2 {
		return
	}
	if most*2 <= len(answers) {
		l.disagree(what, answers)
		return
	}
	if l.split {
		l.split = false
		slog.Warn("the network's nodes agree again; they are used", "network", l.network, "on", what)
		if l.report != nil {
			l.report.NodesDisagree(l.network, false)
		}
	}
	for i, a := range answers {
		n := &l.nodes[i]
		if a == top {
			n.minority = false
			if !n.until.After(l.now()) {
				n.strikes = 0
			}
			continue
		}
		n.minority = true
		reason := fmt.Sprintf("%s: it says %s, %d of the %d nodes that answered say %s", what, a, most, len(answers), top)
		if !n.aside {
			slog.Error("rpc node set aside: it disagrees with the majority of the network's nodes", "network", l.network,
				"node", l.names[i], "on", reason)
		}
		l.setAside(i, reason)
	}
	l.refresh()
}

// disagree records a comparison without a majority; l.mu is held.
func (l *Ledger) disagree(what string, answers map[int]string) {
	if l.split {
		return
	}
	l.split = true
	var said []string
	for _, i := range slices.Sorted(maps.Keys(answers)) {
		said = append(said, l.names[i]+" says "+answers[i])
	}
	slog.Error("the network's nodes disagree and no answer holds a majority: none is used until they agree",
		"network", l.network, "on", what, "answers", strings.Join(said, "; "))
	if l.report != nil {
		l.report.NodesDisagree(l.network, true)
	}
}

// setAside marks node i set aside for reason; l.mu is held.
func (l *Ledger) setAside(i int, reason string) {
	n := &l.nodes[i]
	n.reason = reason
	if n.aside {
		return
	}
	n.aside, n.since = true, l.now()
	if l.report != nil {
		l.report.NodeSetAside(l.network, l.names[i], true)
	}
}

// refresh takes back the nodes whose time set aside has passed and that
// are not in a comparison's minority; l.mu is held.
func (l *Ledger) refresh() {
	now := l.now()
	for i := range l.nodes {
		n := &l.nodes[i]
		if n.aside && !n.minority && !n.until.After(now) {
			n.aside, n.reason = false, ""
			slog.Info("rpc node is asked again", "network", l.network, "node", l.names[i])
			if l.report != nil {
				l.report.NodeSetAside(l.network, l.names[i], false)
			}
		}
	}
}

// Why says why no node may be asked: ErrDisagree, or ErrSetAside.
func (l *Ledger) Why() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.split {
		return ErrDisagree
	}
	return ErrSetAside
}

// Split reports whether the nodes disagree with no majority.
func (l *Ledger) Split() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.split
}

// Status is what the ledger holds of a network's nodes, for readiness.
type Status struct {
	// Nodes is how many nodes the network has.
	Nodes int
	// SetAside are the nodes not used now.
	SetAside []SetAside
	// Disagree says the nodes disagree with no majority: none is used.
	Disagree bool
}

// SetAside is a node not used now, and why.
type SetAside struct {
	Node   string
	Reason string
	Since  time.Time
	// Until is when it is asked again; zero while it disagrees with the
	// majority (until a comparison finds it with the others).
	Until time.Time
}

// Status returns what the ledger holds now.
func (l *Ledger) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	s := Status{Nodes: len(l.nodes), Disagree: l.split}
	for i, n := range l.nodes {
		if !n.aside {
			continue
		}
		a := SetAside{Node: l.names[i], Reason: n.reason, Since: n.since}
		if !n.minority {
			a.Until = n.until
		}
		s.SetAside = append(s.SetAside, a)
	}
	return s
}
