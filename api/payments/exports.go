package payments

import (
	"net/http"
	"strconv"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/workflows"
)

var txColumns = []string{"id", "created_at", "confirmed_at", "finalized_at", "failed_at", "status", "network", "chain_id",
	"asset", "asset_definition_id", "amount", "amount_base_units", "amount_usd", "tx_hash", "log_index", "from_address",
	"to_address", "checkout_session_id", "payment_plan_id", "unexpected", "assigned_session_id", "workflow_id"}

func (s Handlers) exportTransactions(w http.ResponseWriter, r *http.Request, q payment.ListQuery) error {
	cw, err := rest.CSVExport(w, r, "transactions", txColumns)
	if err != nil {
		return err
	}
	n := 0
	err = s.Svc.Payments().ExportTransactions(r.Context(), rest.Principal(r), r.PathValue("projectId"), q, func(t payment.Transaction) error {
		logIndex := ""
		if t.LogIndex >= 0 {
			logIndex = strconv.Itoa(t.LogIndex)
		}
		if err := cw.Write([]string{t.ID, views.Time(t.CreatedAt), rest.OptTime(t.ConfirmedAt), rest.OptTime(t.FinalizedAt), rest.OptTime(t.FailedAt),
			s.TxStatus(string(t.Status)), t.Network, strconv.FormatInt(t.ChainID, 10), rest.Text(t.Symbol), t.AssetDefinitionID, t.Amount,
			t.AmountBaseUnits, payment.FormatUSD(t.AmountUSD), t.TxHash, logIndex, t.FromAddress, t.ToAddress, t.CheckoutSessionID,
			t.PaymentPlanID, strconv.FormatBool(t.Unexpected), t.AssignedSessionID,
			workflows.TransactionWorkflowID(t.ChainID, t.TxHash)}); err != nil {
			return err
		}
		return rest.FlushEvery(w, cw, &n)
	})
	return rest.EndExport(w, r, cw, n, err)
}
