package workflows

import (
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
)

// What an operator reads in the Temporal UI without opening a history:
// every workflow starts with a static summary (one line: what it is about)
// and keeps its current details (what it is doing now) up to date with
// workflow.SetCurrentDetails. Neither is a command, so neither changes a
// history or a replay.

// SessionSummary is the one-line summary of a session's workflow: its
// project, plan, amount and the assets it takes.
func SessionSummary(s payment.Session, planTitle string) string {
	assets := make([]string, 0, len(s.PaymentOptions))
	for _, o := range s.PaymentOptions {
		assets = append(assets, o.Symbol+" on "+o.Network)
	}
	env := "sandbox"
	if s.IsLive {
		env = "live"
	}
	return fmt.Sprintf("Checkout %s · %q · %s USD in %s · project %s (%s)",
		s.ID, planTitle, s.AmountUSD.StringFixed(2), strings.Join(assets, ", "), s.ProjectID, env)
}

// sessionDetails says where a session stands: its status, what it was
// paid, each payment's status, and what the workflow still waits for.
func sessionDetails(now time.Time, s payment.Session, status payment.SessionStatus, paid, exception string,
	lines iter.Seq[payment.PaymentLine], waitingForScan bool) string {
	if d, err := decimal.NewFromString(paid); err == nil {
		paid = d.StringFixed(2)
	}
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**%s** · paid %s of %s USD", status, paid, s.AmountUSD.StringFixed(2)))
	if exception != "" {
		b.WriteString(fmt.Sprintf(" (%s)", exception))
	}
	count := map[payment.TransactionStatus]int{}
	payments, late := 0, 0
	for l := range lines {
		payments++
		count[l.Status]++
		if l.Late {
			late++
		}
	}
	if payments > 0 {
		parts := []string{}
		for _, st := range []payment.TransactionStatus{payment.TxPending, payment.TxConfirmed, payment.TxFinalized, payment.TxFailed} {
			if count[st] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", count[st], st))
			}
		}
		b.WriteString(fmt.Sprintf("\n\npayments: %s", strings.Join(parts, ", ")))
		if late > 0 {
			b.WriteString(fmt.Sprintf(" (%d late)", late))
		}
	}
	switch {
	case status == payment.SessionOpen || status == payment.SessionProcessing:
		b.WriteString(fmt.Sprintf("\n\ntakes payments until %s", s.ExpiresAt.UTC().Format(time.RFC3339)))
	case now.Before(s.LateUntil):
		b.WriteString(fmt.Sprintf("\n\nclosed; still records late payments until %s, then ends", s.LateUntil.UTC().Format(time.RFC3339)))
	case waitingForScan:
		b.WriteString("\n\nclosed; waits for chainwatch to read past the late-payment window, then ends")
	default:
		b.WriteString("\n\nclosed; waits for its payments to be final, then ends")
	}
	return b.String()
}

// TransactionSummary is the one-line summary of a transaction's workflow.
func TransactionSummary(s payment.Session, p SessionTransfer) string {
	return fmt.Sprintf("Transaction %s on %s · for checkout %s · project %s", p.TxHash, p.Network, s.ID, s.ProjectID)
}

// transactionDetails says where a transaction stands on its chain.
func transactionDetails(status payment.TransactionStatus, st CheckOutput, records int) string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**%s**", status))
	switch {
	case !st.Mined:
		b.WriteString(" · not mined yet")
	case !st.Succeeded:
		b.WriteString(fmt.Sprintf(" · reverted in block %d", st.BlockNumber))
	default:
		b.WriteString(fmt.Sprintf(" · block %d · %d of %d confirmations", st.BlockNumber, st.Confirmations, st.RequiredConfirmations))
		if st.Final {
			b.WriteString(" (final)")
		}
	}
	b.WriteString(fmt.Sprintf("\n\n%d transaction record(s)", records))
	return b.String()
}

// DeliverySummary is the one-line summary of a webhook delivery's workflow.
func DeliverySummary(in DeliveryInput, projectID string) string {
	return fmt.Sprintf("Webhook event %s to endpoint %s · project %s", in.EventID, in.EndpointID, projectID)
}

// deliveryDetails says how a delivery is going.
func deliveryDetails(attempt int, r DeliverResult, next time.Time) string {
	answer := "no answer"
	if r.StatusCode > 0 {
		answer = fmt.Sprintf("HTTP %d", r.StatusCode)
	}
	return fmt.Sprintf("**retrying** · attempt %d failed (%s); attempt %d at %s", attempt, answer, attempt+1, next.UTC().Format(time.RFC3339))
}

// chainwatchDetails says how far chainwatch has read.
// Chainwatch continues as new every few hundred scans, and a run started
// so has no static summary: its details say what it is too.
func chainwatchDetails(network string, c ScanCursor, caughtUp bool) string {
	where := "catching up"
	if caughtUp {
		where = "at the head"
	}
	return fmt.Sprintf("**scanning %s** · through block %d (%s)", network, c.Number, where)
}

// ChainwatchSummary is the one-line summary of a network's chainwatch.
func ChainwatchSummary(network string) string {
	return "Chainwatch of network " + network + ": hands every transfer to a deposit address to its session"
}

// RescanSummary is the one-line summary of an operator's rescan.
func RescanSummary(in RescanInput) string {
	return fmt.Sprintf("Rescan of %s blocks %d–%d", in.Network, in.From, in.To)
}

// WebhookDispatcherSummary is the one-line summary of the event dispatcher.
const WebhookDispatcherSummary = "Webhook dispatcher: starts a delivery for every recorded event and every endpoint that wants it"
