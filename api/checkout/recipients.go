package checkout

import (
	"net/http"
	"net/url"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

type recipientView struct {
	Address     string  `json:"address"`
	Environment string  `json:"environment"`
	Status      string  `json:"status"`
	Method      *string `json:"method"`
	VerifiedAt  *string `json:"verifiedAt"`
	// Challenge is the message to sign while the claim is pending.
	Challenge          *string `json:"challenge"`
	ChallengeExpiresAt *string `json:"challengeExpiresAt"`
	CreatedAt          string  `json:"createdAt"`
}

func recipientOf(rc payment.Recipient) recipientView {
	v := recipientView{Address: rc.Address, Environment: "sandbox", Status: "pending", CreatedAt: views.Time(rc.CreatedAt)}
	if rc.IsLive {
		v.Environment = "live"
	}
	if rc.Verified() {
		at, m := views.Time(*rc.VerifiedAt), rc.Method
		v.Status, v.VerifiedAt, v.Method = "verified", &at, &m
	} else {
		exp, ch := views.Time(rc.ChallengeExpiresAt), rc.Challenge
		v.Challenge, v.ChallengeExpiresAt = &ch, &exp
	}
	return v
}

func (s Handlers) ListRecipients(w http.ResponseWriter, r *http.Request) error {
	return rest.RespondList(w, r, "Recipients retrieved", recipientOf)(s.Svc.Checkout().ListRecipients(r.Context(), rest.Principal(r), r.PathValue("projectId")))
}

func (s Handlers) GetRecipient(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.Svc.Checkout().ListRecipients(r.Context(), rest.Principal(r), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	a, msg := payment.CheckAddress(r.PathValue("address"))
	for _, rc := range rs {
		if msg == "" && rc.Address == a {
			rest.OK(w, r, http.StatusOK, "Recipient retrieved", recipientOf(rc))
			return nil
		}
	}
	return payment.NotFound("Recipient")
}

func (s Handlers) ClaimRecipient(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, []string{"address"})
	if err != nil {
		return err
	}
	host := ""
	if u, err := url.Parse(s.CheckoutURL); err == nil {
		host = u.Host
	}
	rc, err := s.Svc.Checkout().ClaimRecipient(r.Context(), rest.Principal(r), r.PathValue("projectId"), *in["address"], host)
	if err != nil {
		return err
	}
	if rc.Verified() {
		rest.OK(w, r, http.StatusOK, "Recipient already verified", recipientOf(rc))
		return nil
	}
	rest.OK(w, r, http.StatusCreated, "Recipient claimed: sign the challenge with the address's wallet and send the signature to …/verify", recipientOf(rc))
	return nil
}

func (s Handlers) VerifyRecipient(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, []string{"signature"})
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusOK, "Recipient verified", recipientOf)(s.Svc.Checkout().VerifyRecipient(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("address"), *in["signature"]))
}

func (s Handlers) DeleteRecipient(w http.ResponseWriter, r *http.Request) error {
	if err := s.Svc.Checkout().DeleteRecipient(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("address")); err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Recipient removed", map[string]string{"address": r.PathValue("address")})
	return nil
}
