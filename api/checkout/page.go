package checkout

import (
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/paymentsd/paymentsd/api/web"
	"github.com/paymentsd/paymentsd/payment"
	"rsc.io/qr"
)

// RefundPage is a refund's claim link: the page where the customer gives
// the address.
func (s Handlers) RefundPage(w http.ResponseWriter, r *http.Request) error {
	if !payment.ValidSessionToken(r.PathValue("claimToken")) {
		return payment.NotFound("Refund")
	}
	web.Refund(w, r)
	return nil
}

func (s Handlers) CheckoutPage(w http.ResponseWriter, r *http.Request) error {
	if !payment.ValidSessionToken(r.PathValue("sessionToken")) {
		return payment.NotFound("Checkout session")
	}
	web.Checkout(w, r)
	return nil
}

// CheckoutQR renders the payment request (EIP-681, or BIP21 for bitcoin) of one of the session's
// options as a QR code a wallet scans.
func (s Handlers) CheckoutQR(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Svc.Checkout().SessionByToken(r.Context(), r.PathValue("sessionToken"))
	if err != nil {
		return err
	}
	asset := strings.TrimSuffix(r.PathValue("file"), ".png")
	for _, o := range v.Session.PaymentOptions {
		if o.AssetDefinitionID != asset || o.PaymentURI == "" {
			continue
		}
		code, err := qr.Encode(remainingURI(v.Session, o), qr.M)
		if err != nil {
			return err
		}
		code.Scale = 6
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "private, max-age=3600")
		_, _ = w.Write(code.PNG())
		return nil
	}
	return payment.NotFound("Payment option")
}

// remainingURI is the option's payment request for what is still due: the
// whole amount, or, once part is paid, the rest at the session's rate,
// rounded up. On a shared recipient it is always the session's exact
// amount, the only one that identifies its payment.
func remainingURI(s payment.Session, o payment.PaymentOption) string {
	if s.SharedRecipient || !s.AmountPaidUSD.IsPositive() || !s.AmountPaidUSD.LessThan(s.AmountUSD) {
		return o.PaymentURI
	}
	base, ok := new(big.Int).SetString(o.AmountBaseUnits, 10)
	if !ok {
		return o.PaymentURI
	}
	left := s.AmountUSD.Sub(s.AmountPaidUSD).Shift(payment.USDScale).BigInt()
	due := s.AmountUSD.Shift(payment.USDScale).BigInt()
	q, r := new(big.Int).QuoRem(new(big.Int).Mul(base, left), due, new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if o.DepositAddress != "" {
		// Bitcoin: the option's own address, and the label it was
		// quoted with.
		label := ""
		if u, err := url.Parse(o.PaymentURI); err == nil {
			label = u.Query().Get("label")
		}
		return payment.BitcoinURI(o.DepositAddress, q, label)
	}
	asset := payment.Asset{ChainID: o.ChainID, TokenAddress: o.TokenAddress}
	return payment.PaymentURI(asset, s.DepositAddress, q)
}
