package workflows

import (
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// transactionOneTransfer is the transaction workflow of the executions
// started before changeTransfers: it records one transfer, to the session
// that started it. Running executions replay it; new ones do not run it.
func transactionOneTransfer(ctx workflow.Context, in TransactionInput) error {
	ctx = withLocalActivityOptions(ctx)
	// pendingSince is when the transaction last entered pending: its
	// start, or the reorg that took its block away.
	pendingSince := workflow.Now(ctx)
	p := in.Payment
	check := func() (CheckOutput, error) {
		return checkTransaction(ctx, CheckInput{Network: p.Network, TxHash: p.TxHash, DepositAddress: in.Session.DepositAddress})
	}
	st, err := check()
	if err != nil {
		return err
	}
	if st.Payment != nil {
		p.From, p.To, p.AssetID, p.AmountBaseUnits, p.LogIndex = st.Payment.From, st.Payment.To, st.Payment.AssetID, st.Payment.AmountBaseUnits, st.Payment.LogIndex
	}
	if p.AssetID == "" && st.Mined {
		// Mined, but it pays nothing to this session: record it as failed
		// so the payer sees why it did not count.
		p.AmountBaseUnits = "0"
	}

	status := payment.TxPending
	if st.Mined && st.Succeeded && p.Source == "scanner" {
		status = payment.TxConfirmed
	}
	now := workflow.Now(ctx)
	var id string
	newID := func() string {
		var s string
		_ = workflow.SideEffect(ctx, func(workflow.Context) any { return payment.NewID(payment.PrefixTx, now) }).Get(&s)
		return s
	}
	txID := newID()
	record := payment.Transaction{
		ID: txID, ProjectID: in.Session.ProjectID, CheckoutSessionID: in.Session.ID, PaymentPlanID: in.Session.PaymentPlanID,
		IsLive: in.Session.IsLive, Status: status, Network: p.Network, ChainID: p.ChainID, TxHash: strings.ToLower(p.TxHash),
		LogIndex: p.LogIndex, FromAddress: p.From, ToAddress: p.To, AssetDefinitionID: p.AssetID,
		Symbol: symbolOf(in.Session, p.AssetID), Amount: amountOf(in.Session, p.AssetID, p.AmountBaseUnits),
		AmountBaseUnits:       nonEmptyOr(p.AmountBaseUnits, "0"),
		AmountUSD:             payment.LineUSD(in.Session, payment.PaymentLine{AssetID: p.AssetID, AmountBaseUnits: p.AmountBaseUnits}),
		RequiredConfirmations: st.RequiredConfirmations, StatusHistory: []payment.StatusChange{{Status: status, At: now}},
		CreatedAt: now, UpdatedAt: now,
	}
	if status == payment.TxConfirmed {
		n := int64(st.BlockNumber)
		record.BlockNumber, record.BlockHash, record.Confirmations, record.ConfirmedAt = &n, st.BlockHash, st.Confirmations, &now
	}
	stored, err := recordTransaction(ctx, RecordInput{Transaction: record})
	if err != nil {
		return err
	}
	id, status, version := stored.ID, stored.Status, stored.Version
	blockHash := stored.BlockHash
	tell := func() {
		_ = workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(in.Session.ID), "", SignalTxStatus,
			TxStatus{Key: p.Key(), Status: status, AssetID: p.AssetID, AmountBaseUnits: p.AmountBaseUnits}).Get(ctx, nil)
	}
	advance := func(to payment.TransactionStatus, reason string, st CheckOutput) error {
		if err := payment.AdvanceTransaction(status, to); err != nil {
			return err
		}
		version++
		in := AdvanceInput{TransactionID: id, From: status, To: to, At: workflow.Now(ctx), Reason: reason, Check: st,
			Version: version}
		if err := advanceTransaction(ctx, in); err != nil {
			return err
		}
		status = to
		if to == payment.TxPending && workflow.GetVersion(ctx, changePendingTimeoutFromPending, workflow.DefaultVersion, 1) == 1 {
			pendingSince = workflow.Now(ctx)
		}
		_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(status)))
		tell()
		return nil
	}
	tell()

	for !status.Terminal() {
		switch status {
		case payment.TxPending:
			switch {
			case st.Mined && !st.Succeeded:
				err = advance(payment.TxFailed, "reverted", st)
			case st.Mined && p.AssetID == "":
				err = advance(payment.TxFailed, "pays nothing to the session's deposit address", st)
			case st.Mined:
				blockHash = st.BlockHash
				err = advance(payment.TxConfirmed, "", st)
			case workflow.Now(ctx).Sub(pendingSince) >= st.PendingTimeout:
				err = advance(payment.TxFailed, "not mined within "+st.PendingTimeout.String(), st)
			}
		case payment.TxConfirmed:
			switch {
			case !st.Mined || st.BlockHash != blockHash:
				err = advance(payment.TxPending, "its block left the canonical chain", st)
			case st.Final || st.Confirmations >= st.RequiredConfirmations:
				err = advance(payment.TxFinalized, "", st)
			}
		}
		if err != nil {
			return err
		}
		if status.Terminal() {
			break
		}
		if err := workflow.Sleep(ctx, st.BlockTime); err != nil {
			return err
		}
		if st, err = check(); err != nil {
			return err
		}
	}
	return nil
}

func symbolOf(s payment.Session, assetID string) string {
	o, _ := s.Option(assetID)
	return o.Symbol
}

func amountOf(s payment.Session, assetID, base string) string {
	o, ok := s.Option(assetID)
	if !ok || base == "" {
		return "0"
	}
	return payment.UnitsToAmount(base, o.Decimals)
}

func nonEmptyOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
