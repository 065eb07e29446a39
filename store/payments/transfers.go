package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/checkout"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// lockTransaction serializes, until the end of tx, every change to the
// records of one on-chain transaction: its workflow's and the payers'
// claims.
func lockTransaction(ctx context.Context, tx pgx.Tx, chainID int64, hash string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
		fmt.Sprintf("transaction/%d/%s", chainID, strings.ToLower(hash)))
	return err
}

func transactionRecords(ctx context.Context, tx pgx.Tx, chainID int64, hash string) ([]payment.Transaction, error) {
	rows, err := tx.Query(ctx, `SELECT `+db.TxColumns+` FROM transactions WHERE chain_id = $1 AND tx_hash = $2
		ORDER BY created_at, id`, chainID, strings.ToLower(hash))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Transaction, error) { return db.ScanTx(r) })
}

// TransactionRecords returns the records of one on-chain transaction, oldest
// first.
func (s Store) TransactionRecords(ctx context.Context, chainID int64, hash string) ([]payment.Transaction, error) {
	var out []payment.Transaction
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = transactionRecords(ctx, tx, chainID, hash)
		return err
	})
	return out, err
}

// RecordClaim records a payer's claim that a transaction pays a session,
// with its event, and returns it. When the session already has a record of
// that transaction (a transfer chainwatch found, or an open claim), that
// record is returned instead and nothing is written.
func (s Store) RecordClaim(ctx context.Context, claim payment.Transaction, render db.Render[payment.Transaction]) (payment.Transaction, error) {
	var out payment.Transaction
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := lockTransaction(ctx, tx, claim.ChainID, claim.TxHash); err != nil {
			return err
		}
		records, err := transactionRecords(ctx, tx, claim.ChainID, claim.TxHash)
		if err != nil {
			return err
		}
		var transfer, open *payment.Transaction
		for i := range records {
			t := &records[i]
			switch {
			case t.CheckoutSessionID != claim.CheckoutSessionID:
			case !t.IsClaim() && (transfer == nil || t.LogIndex < transfer.LogIndex):
				transfer = t
			case t.IsClaim() && t.Status == payment.TxPending:
				open = t
			}
		}
		if transfer != nil {
			open = transfer
		}
		if open != nil {
			out = *open
			return nil
		}
		if _, err := insertTx(ctx, tx, claim); err != nil {
			return err
		}
		out = claim
		return db.InsertEvent(ctx, tx, claim.ProjectID, claim.IsLive, payment.EventTxPending, claim.ID, 1, render, claim, claim.CreatedAt)
	})
	return out, err
}

// SyncTransaction brings the records of one on-chain transaction in line
// with the chain, in one database transaction: it reads the records and
// what tells the sessions its transfers pay (Recipients, of the network's
// environment), asks decide for the changes (payment.MatchTransfers), and
// records them with their events. It returns the transaction's records as
// they are after the changes. A retry finds the changes made and decides
// none.
func (s Store) SyncTransaction(ctx context.Context, network string, chainID int64, hash string, transfers []payment.Transfer, isLive bool,
	decide func([]payment.Transaction, payment.Recipients) []payment.TxChange, render db.Render[payment.Transaction]) ([]payment.Transaction, error) {
	var out []payment.Transaction
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := lockTransaction(ctx, tx, chainID, hash); err != nil {
			return err
		}
		records, err := transactionRecords(ctx, tx, chainID, hash)
		if err != nil {
			return err
		}
		to, err := checkout.Recipients(ctx, tx, network, isLive, transfers)
		if err != nil {
			return err
		}
		changes := decide(records, to)
		if err := applyChanges(ctx, tx, records, changes, render); err != nil {
			return err
		}
		out, err = transactionRecords(ctx, tx, chainID, hash)
		return err
	})
	return out, err
}

// applyChanges records changes in order. A change's record carries the
// version it reaches; its event is keyed by it.
func applyChanges(ctx context.Context, tx pgx.Tx, records []payment.Transaction, changes []payment.TxChange, render db.Render[payment.Transaction]) error {
	// A reorg can mine the transaction again with its logs at other
	// indexes: free the indexes that move first, so that two records
	// trading places never collide on (chain, hash, log index).
	stored := map[string]int{}
	for _, r := range records {
		stored[r.ID] = r.LogIndex
	}
	for i, c := range changes {
		if old, ok := stored[c.Transaction.ID]; ok && !c.Insert && old != c.Transaction.LogIndex {
			if _, err := tx.Exec(ctx, `UPDATE transactions SET log_index = $2 WHERE id = $1`,
				c.Transaction.ID, -1_000_000-i); err != nil {
				return db.MapErr(err)
			}
			stored[c.Transaction.ID] = c.Transaction.LogIndex
		}
	}
	for _, c := range changes {
		t := c.Transaction
		if c.Insert {
			inserted, err := insertTx(ctx, tx, t)
			if err != nil {
				return err
			}
			if !inserted {
				return fmt.Errorf("transfer %s/%d of %s is recorded already", t.TxHash, t.LogIndex, t.CheckoutSessionID)
			}
		} else {
			history, _ := json.Marshal(t.StatusHistory)
			previous := t.Version
			if c.Event != "" {
				previous--
			}
			tag, err := tx.Exec(ctx, `UPDATE transactions SET status = $3, log_index = $4, from_address = $5, to_address = $6,
				asset_definition_id = $7, symbol = $8, amount = $9, amount_base_units = $10, amount_usd = $11,
				block_number = $12, block_hash = $13, confirmations = $14, required_confirmations = $15,
				failure_reason = $16, status_history = $17, updated_at = $18, confirmed_at = $19, finalized_at = $20,
				failed_at = $21, version = $2 WHERE id = $1 AND version = $22`,
				t.ID, t.Version, t.Status, logIndexValue(t.LogIndex), t.FromAddress, t.ToAddress, t.AssetDefinitionID,
				t.Symbol, t.Amount, t.AmountBaseUnits, t.AmountUSD.String(), t.BlockNumber, t.BlockHash, t.Confirmations,
				t.RequiredConfirmations, t.FailureReason, history, t.UpdatedAt, t.ConfirmedAt, t.FinalizedAt, t.FailedAt, previous)
			if err != nil {
				return db.MapErr(err)
			}
			if tag.RowsAffected() != 1 {
				return fmt.Errorf("transaction %s changed under its workflow (version %d)", t.ID, previous)
			}
		}
		if c.Event != "" {
			if err := db.InsertEvent(ctx, tx, t.ProjectID, t.IsLive, c.Event, t.ID, t.Version, render, t, t.UpdatedAt); err != nil {
				return err
			}
		}
	}
	return nil
}

// insertTx inserts a record; inserted is false when its transfer (chain,
// hash, log index) is recorded already.
func insertTx(ctx context.Context, tx pgx.Tx, t payment.Transaction) (inserted bool, err error) {
	history, _ := json.Marshal(t.StatusHistory)
	tag, err := tx.Exec(ctx, `INSERT INTO transactions (`+txColumnsInsert+`, version)
		VALUES ($1,$2,nullif($3, ''),nullif($4, ''),$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$30)
		ON CONFLICT DO NOTHING`,
		t.ID, t.ProjectID, t.CheckoutSessionID, t.PaymentPlanID, t.IsLive, t.Status, t.Network, t.ChainID,
		t.TxHash, logIndexValue(t.LogIndex), t.FromAddress, t.ToAddress, t.AssetDefinitionID, t.Symbol, t.Amount,
		t.AmountBaseUnits, t.AmountUSD.String(), t.BlockNumber, t.BlockHash, t.Confirmations, t.RequiredConfirmations,
		t.FailureReason, history, t.CreatedAt, t.UpdatedAt, t.ConfirmedAt, t.FinalizedAt, t.FailedAt, t.Unexpected, t.Version)
	if err != nil {
		return false, db.MapErr(err)
	}
	return tag.RowsAffected() == 1, nil
}
