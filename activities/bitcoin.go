package activities

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/chainwatch/btcscan"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// mempools are, per Bitcoin network, the transactions its last scan found
// in the node's mempool: the next scan reads only the new ones. A worker
// that starts reads the whole mempool once.
type mempools struct {
	mu   sync.Mutex
	seen map[string]map[chainhash.Hash]bool
}

func (m *mempools) get(network string) map[chainhash.Hash]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[network]
}

func (m *mempools) set(network string, seen map[chainhash.Hash]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]map[chainhash.Hash]bool{}
	}
	m.seen[network] = seen
}

// scanBitcoin is ScanNetwork on a Bitcoin network: the blocks after the
// cursor, then the mempool (chainwatch.BitcoinPoller), whose transactions
// it returns for the next scan to skip once this one is handed over. What
// it finds is recorded (store.RecordBitcoinScan) before it is handed over,
// so a transaction's follower knows of it first; the payments to
// sessions' addresses are the scan's transfers, a mempool payment's
// without a block.
func (a *Activities) scanBitcoin(ctx context.Context, c *chainwatch.Chain, cursor chainwatch.Cursor) (workflows.ScanOutput, map[chainhash.Hash]bool, error) {
	network := c.Network.Key
	sessions := map[string]store.WatchedAddress{}
	sent := &bitcoinOutgoing{a: a, network: network}
	watch := btcscan.Watch{
		Addresses: func(ctx context.Context, addrs []string) (map[string]bool, error) {
			found, err := a.Store.Checkout().BitcoinDepositAddresses(ctx, addrs)
			if err != nil {
				return nil, err
			}
			watched, err := sent.watch(ctx, addrs)
			if err != nil {
				return nil, err
			}
			for _, w := range found {
				if w.IsLive != c.Network.IsLive {
					continue // a key of one environment derives addresses of its own network only
				}
				sessions[w.Address] = w
				watched[w.Address] = true
			}
			return watched, nil
		},
		Spends: func(ctx context.Context, spent []wire.OutPoint) (map[wire.OutPoint]chainhash.Hash, error) {
			return a.Store.Chains().BitcoinSpends(ctx, network, spent)
		},
	}
	polled, err := c.BitcoinPoller(a.Store.Chains().ScannedBlocks(network)).Poll(ctx, cursor, a.mempools.get(network), watch)
	out := scanned(network, polled.Head, polled.Cursor, polled.CaughtUp)
	if err != nil {
		return out, nil, err
	}
	observability.ScannedBlock.WithLabelValues(network).Set(float64(polled.Cursor.Number))
	if err := a.Store.Chains().RecordBitcoinScan(ctx, network, polled.Found, time.Now()); err != nil {
		return out, nil, classify(err)
	}
	for _, cf := range polled.Found.Conflicts {
		slog.WarnContext(ctx, "a watched Bitcoin transaction was replaced or double-spent", "network", network,
			"txid", cf.TxID.String(), "by", cf.By.String(), "mined", cf.Block.Height > 0)
	}
	paying, err := sent.sessionOutputs(ctx, c, polled.Found.Outputs, sessions)
	if err != nil {
		return out, nil, err
	}
	asset, ok := bitcoinAsset(c)
	if !ok {
		return out, polled.Mempool, nil
	}
	for _, o := range paying {
		w := sessions[o.Address]
		t := workflows.SessionTransfer{SessionID: w.SessionID, ProjectID: w.ProjectID, IsLive: w.IsLive, Network: network,
			TxHash: o.TxID.String(), LogIndex: int(o.Vout), To: o.Address, AssetID: asset.ID,
			AmountBaseUnits: strconv.FormatInt(o.Sats, 10), Source: "chainwatch"}
		if o.Block.Height > 0 {
			t.BlockNumber, t.BlockHash, t.BlockTime = uint64(o.Block.Height), o.Block.Hash.String(), uint64(o.Block.Time)
		}
		out.Transfers = append(out.Transfers, t)
	}
	return out, polled.Mempool, nil
}

// bitcoinAsset is a Bitcoin network's asset, bitcoin, when the catalog
// has it.
func bitcoinAsset(c *chainwatch.Chain) (payment.Asset, bool) {
	for _, a := range c.Assets {
		if a.Bitcoin() {
			return a, true
		}
	}
	return payment.Asset{}, false
}

// checkBitcoin is CheckTransaction on a Bitcoin network: where the
// transaction stands from what the scans saw of it and the node's chain
// (chainwatch.CheckBitcoin), its outputs to watched addresses as its
// transfers from the mempool on, and the confirmations what it pays its
// sessions calls for (the network's finality tiers, by the value received,
// never below the tier of a session's own amount).
func (a *Activities) checkBitcoin(ctx context.Context, c *chainwatch.Chain, hash string, out workflows.CheckOutput) (workflows.CheckOutput, error) {
	txid, err := chainhash.NewHashFromStr(strings.TrimPrefix(hash, "0x"))
	if err != nil {
		return out, temporal.NewNonRetryableApplicationError("not a Bitcoin transaction ID: "+hash, "invalid", err)
	}
	seen, ok, err := a.Store.Chains().BitcoinSeen(ctx, c.Network.Key, *txid)
	if err != nil || !ok {
		// Not seen by the scans (yet): pending.
		return out, classify(err)
	}
	st, err := chainwatch.CheckBitcoin(ctx, c.BitcoinScanner(), seen)
	if err != nil {
		return out, err
	}
	out.Mined, out.Succeeded, out.Conflict = st.Mined, st.Succeeded, st.Conflict
	out.BlockNumber, out.Confirmations, out.MinedAt = st.BlockNumber, int(st.Confirmations), st.BlockTime
	if st.Mined {
		out.BlockHash = seen.Block.Hash.String()
	}
	asset, ok := bitcoinAsset(c)
	if !ok {
		return out, nil
	}
	addresses := make([]string, len(seen.Outputs))
	for i, o := range seen.Outputs {
		out.Transfers = append(out.Transfers, payment.Transfer{LogIndex: int(o.Vout), To: o.Address, AssetID: asset.ID,
			AmountBaseUnits: strconv.FormatInt(o.Sats, 10)})
		addresses[i] = o.Address
	}
	sessions, err := a.Store.Chains().BitcoinSessions(ctx, addresses)
	if err != nil {
		return out, classify(err)
	}
	out.RequiredConfirmations = c.Network.ConfirmationsForReceived(received(asset, seen.Outputs, sessions))
	return out, nil
}

// received is what a Bitcoin transaction's outputs pay each session they
// reach, at the session's quoted rate for bitcoin (late payments count at
// it too), with the amount the session asks: its depth follows what was
// received, not what was asked. An output to no session (an outgoing
// transfer's change) is not a payment.
func received(asset payment.Asset, outputs []chainwatch.BitcoinOutput, sessions map[string]payment.Session) []chainwatch.Received {
	sats := map[string]int64{}
	var order []string
	for _, o := range outputs {
		if _, ok := sessions[o.Address]; !ok {
			continue
		}
		if _, ok := sats[o.Address]; !ok {
			order = append(order, o.Address)
		}
		sats[o.Address] += o.Sats
	}
	paid := make([]chainwatch.Received, 0, len(order))
	for _, addr := range order {
		s := sessions[addr]
		usd := chainwatch.Unpriced
		if quoted(s, asset.ID) {
			usd = payment.LineUSD(s, payment.PaymentLine{AssetID: asset.ID, AmountBaseUnits: strconv.FormatInt(sats[addr], 10)})
		}
		paid = append(paid, chainwatch.Received{AskedUSD: s.AmountUSD, ReceivedUSD: usd})
	}
	return paid
}

// quoted tells that the session quoted a positive amount of the asset: a
// rate its payments in it count at.
func quoted(s payment.Session, assetID string) bool {
	for _, o := range s.PaymentOptions {
		if q, err := strconv.ParseInt(o.AmountBaseUnits, 10, 64); o.AssetDefinitionID == assetID && err == nil && q > 0 {
			return true
		}
	}
	return false
}
