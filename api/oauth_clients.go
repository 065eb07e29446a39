package api

import (
	"net/http"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

type oauthClientView struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirectUris"`
	Confidential bool     `json:"confidential"`
	CreatedAt    string   `json:"createdAt"`
	RevokedAt    *string  `json:"revokedAt"`
}

func oauthClientViewOf(c payment.OAuthClient) oauthClientView {
	return oauthClientView{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs, Confidential: c.Confidential,
		CreatedAt: views.Time(c.CreatedAt), RevokedAt: views.OptTime(c.RevokedAt)}
}

func decodeOAuthClientInput(body []byte) (payment.OAuthClientInput, error) {
	obj, err := parseObject(body)
	if err != nil {
		return payment.OAuthClientInput{}, err
	}
	var probs payment.Problems
	f := newFields(obj, "", &probs)
	in := payment.OAuthClientInput{Name: f.str("name"), RedirectURIs: f.strings("redirectUris"), Confidential: f.boolean("confidential")}
	f.done()
	return in, probs.Err()
}

func (s accessAPI) createOAuthClient(w http.ResponseWriter, r *http.Request) error {
	in, err := bodyOf(r, decodeOAuthClientInput)
	if err != nil {
		return err
	}
	c, secret, err := s.svc.Access().CreateOAuthClient(r.Context(), principal(r), r.PathValue("projectId"), in)
	if err != nil {
		return err
	}
	var shown *string
	if secret != "" {
		shown = &secret
	}
	ok(w, r, http.StatusCreated, "Application registered; a confidential client's secret is shown this once",
		map[string]any{"client": oauthClientViewOf(c), "clientSecret": shown})
	return nil
}

func (s accessAPI) listOAuthClients(w http.ResponseWriter, r *http.Request) error {
	return respondList(w, r, "Applications retrieved", oauthClientViewOf)(s.svc.Access().OAuthClients(r.Context(), principal(r), r.PathValue("projectId")))
}

func (s accessAPI) revokeOAuthClient(w http.ResponseWriter, r *http.Request) error {
	return respond(w, r, http.StatusOK, "Application revoked", oauthClientViewOf)(s.svc.Access().RevokeOAuthClient(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("clientId")))
}
