package rest

import (
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/workflows"
)

// SessionJSON is the REST API's session: the merchant's view and the ID
// of the workflow that drives it (for the Temporal UI).
type SessionJSON struct {
	views.Session
	WorkflowID string `json:"workflowId"`
	// Refunds are in the lookup of one session only.
	Refunds *views.SessionRefunds `json:"refunds,omitempty"`
}

func (s *Edge) SessionJSON(v service.SessionView) SessionJSON {
	out := SessionJSON{Session: s.SessionView(v), WorkflowID: workflows.CheckoutSessionWorkflowID(v.Session.ID)}
	if v.Refunds != nil {
		books := views.SessionRefundsOf(v.Session.ID, v.Transactions, v.Refunds, s.Svc.Catalog())
		out.Refunds = &books
	}
	return out
}

// TxJSON is the REST API's transaction: the record, the ID of its
// workflow and its page on the network's block explorer (null where the
// network has none).
type TxJSON struct {
	views.Transaction
	WorkflowID  string  `json:"workflowId"`
	ExplorerURL *string `json:"explorerUrl"`
}

func (s *Edge) TxJSON(t payment.Transaction) TxJSON {
	v := TxJSON{Transaction: views.TransactionOf(t), WorkflowID: workflows.TransactionWorkflowID(t.ChainID, t.TxHash)}
	v.Status = s.TxStatus(v.Status)
	v.StatusHistory = views.TxHistory(s.Shape, v.StatusHistory)
	if u := s.Svc.ExplorerTxURL(t.Network, t.TxHash); u != "" {
		v.ExplorerURL = &u
	}
	return v
}
