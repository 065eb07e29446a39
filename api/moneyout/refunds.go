package moneyout

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

// decodeRefundInput reads a refund's create payload.
func decodeRefundInput(body []byte) (string, payment.RefundInput, error) {
	obj, err := rest.ParseObject(body)
	if err != nil {
		return "", payment.RefundInput{}, err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	sessionID := f.Str("checkoutSessionId")
	in := payment.RefundInput{AssetDefinitionID: f.Str("assetDefinitionId"), Amount: f.Str("amount"),
		AmountUSD: f.Str("amountUsd"), Address: f.Str("address"), Reason: f.Str("reason")}
	f.Done()
	var id string
	switch {
	case sessionID == nil:
		probs.Merge(payment.Problems{{Field: "checkoutSessionId", Message: "is required"}})
	case !payment.ValidID(payment.PrefixSession, *sessionID):
		probs.Merge(payment.Problems{{Field: "checkoutSessionId", Message: "is not a checkout session ID"}})
	default:
		id = *sessionID
	}
	in.Problems = probs
	return id, in, nil
}

// decodeClaim reads the customer's {address, acceptContract}; a missing
// address is "".
func decodeClaim(body []byte) (string, bool, error) {
	obj, err := rest.ParseObject(body)
	if err != nil {
		return "", false, err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	address, accept := f.Str("address"), f.Boolean("acceptContract")
	f.Done()
	if err := probs.Err(); err != nil || address == nil {
		return "", false, err // a missing address is the service's to refuse, once the refund is found
	}
	return *address, accept != nil && *accept, nil
}

func (s Handlers) refundJSON(r payment.Refund) views.Refund { return views.RefundOf(r) }

func (s Handlers) CreateRefund(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	sessionID, in, err := decodeRefundInput(body)
	if err != nil {
		return rest.DecodeErr(w, r, err)
	}
	refund, token, err := s.Svc.MoneyOut().CreateRefund(r.Context(), rest.Principal(r), r.PathValue("projectId"), sessionID, in)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusCreated, "Refund created", s.CreatedRefund(refund, token))
	return nil
}

// CreatedRefund is a refund as its creation answers it: with the claim
// link, once, when the customer is to give the address.
func (s Handlers) CreatedRefund(refund payment.Refund, token string) views.Refund {
	v := views.RefundOf(refund)
	if refund.Status == payment.RefundAwaitingAddress {
		claim := s.CheckoutURL + "/refund/" + token
		v.ClaimURL = &claim
	}
	return v
}

func (s Handlers) ListRefunds(w http.ResponseWriter, r *http.Request) error {
	q, sessionID, err := rest.ParseRefundQuery(r.URL.Query(), rest.RefundStatuses)
	if err != nil {
		return err
	}
	if rest.WantsCSV(r) {
		return s.exportRefunds(w, r, q, sessionID)
	}
	page, err := s.Svc.MoneyOut().ListRefunds(r.Context(), rest.Principal(r), r.PathValue("projectId"), sessionID, q)
	if err != nil {
		return err
	}
	rest.OKList(w, r, "Refunds retrieved", rest.MapSlice(page.Items, s.refundJSON), q, page.Total)
	return nil
}

func (s Handlers) GetRefund(w http.ResponseWriter, r *http.Request) error {
	return answerItem(s, w, r, "refundId", "Refund retrieved", service.MoneyOut.GetRefund, s.refundJSON)
}

func (s Handlers) SetRefundAddress(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	address, err := rest.DecodeString(body, "address")
	if err != nil {
		return rest.DecodeErr(w, r, err)
	}
	refund, err := s.Svc.MoneyOut().SetRefundAddress(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("refundId"), address)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Refund address set", s.refundJSON(refund))
	return nil
}

// ApproveRefund takes no body, {} or {address}: the address the owner was
// shown, which must still be the refund's.
func (s Handlers) ApproveRefund(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	var address string
	if len(bytes.TrimSpace(body)) > 0 {
		var err error
		if address, err = rest.DecodeString(body, "address"); err != nil {
			return rest.DecodeErr(w, r, err)
		}
	}
	refund, err := s.Svc.MoneyOut().ApproveRefund(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("refundId"), address)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Refund approved", s.refundJSON(refund))
	return nil
}

func (s Handlers) CancelRefund(w http.ResponseWriter, r *http.Request) error {
	return answerItem(s, w, r, "refundId", "Refund canceled", service.MoneyOut.CancelRefund, s.refundJSON)
}

func (s Handlers) GetRefundClaim(w http.ResponseWriter, r *http.Request) error {
	refund, err := s.Svc.MoneyOut().RefundClaim(r.Context(), r.PathValue("claimToken"))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Refund retrieved", views.RefundClaimOf(refund))
	return nil
}

func (s Handlers) ClaimRefund(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	address, accept, err := decodeClaim(body)
	if err != nil {
		return rest.DecodeErr(w, r, err)
	}
	refund, err := s.Svc.MoneyOut().ClaimRefund(r.Context(), r.PathValue("claimToken"), address, accept)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Refund address given", views.RefundClaimOf(refund))
	return nil
}

func (s Handlers) ReportRefundSent(w http.ResponseWriter, r *http.Request) error {
	return answerReportSent(s, w, r, "refundId", "Refund transaction recorded", service.MoneyOut.ReportRefundSent, s.refundJSON)
}

var refundColumns = []string{"id", "created_at", "updated_at", "status", "checkout_session_id", "network", "chain_id", "asset",
	"asset_definition_id", "amount", "amount_base_units", "amount_usd", "rate_usd", "from_address", "to_address",
	"address_source", "tx_hash", "reason", "failure_reason"}

func (s Handlers) exportRefunds(w http.ResponseWriter, r *http.Request, q payment.ListQuery, sessionID string) error {
	cw, err := rest.CSVExport(w, r, "refunds", refundColumns)
	if err != nil {
		return err
	}
	n := 0
	err = s.Svc.MoneyOut().ExportRefunds(r.Context(), rest.Principal(r), r.PathValue("projectId"), sessionID, q, func(f payment.Refund) error {
		usd, rate := "", ""
		if f.AmountUSD != nil {
			usd = payment.FormatUSD(*f.AmountUSD)
		}
		if f.RateUSD != nil {
			rate = f.RateUSD.String()
		}
		if err := cw.Write([]string{f.ID, views.Time(f.CreatedAt), views.Time(f.UpdatedAt), string(f.Status), f.CheckoutSessionID,
			f.Network, strconv.FormatInt(f.ChainID, 10), rest.Text(f.Symbol), f.AssetDefinitionID, f.Amount(), f.AmountBaseUnits, usd, rate,
			f.FromAddress, f.ToAddress, f.AddressSource, f.TxHash, rest.Text(f.Reason), rest.Text(f.FailureReason)}); err != nil {
			return err
		}
		return rest.FlushEvery(w, cw, &n)
	})
	return rest.EndExport(w, r, cw, n, err)
}
