package access

import (
	"net/http"

	"github.com/paymentsd/paymentsd/api/internal/rest"
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
	obj, err := rest.ParseObject(body)
	if err != nil {
		return payment.OAuthClientInput{}, err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	in := payment.OAuthClientInput{Name: f.Str("name"), RedirectURIs: f.Strings("redirectUris"), Confidential: f.Boolean("confidential")}
	f.Done()
	return in, probs.Err()
}

func (s Handlers) CreateOAuthClient(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.BodyOf(r, decodeOAuthClientInput)
	if err != nil {
		return err
	}
	c, secret, err := s.Svc.Access().CreateOAuthClient(r.Context(), rest.Principal(r), r.PathValue("projectId"), in)
	if err != nil {
		return err
	}
	var shown *string
	if secret != "" {
		shown = &secret
	}
	rest.OK(w, r, http.StatusCreated, "Application registered; a confidential client's secret is shown this once",
		map[string]any{"client": oauthClientViewOf(c), "clientSecret": shown})
	return nil
}

func (s Handlers) ListOAuthClients(w http.ResponseWriter, r *http.Request) error {
	return rest.RespondList(w, r, "Applications retrieved", oauthClientViewOf)(s.Svc.Access().OAuthClients(r.Context(), rest.Principal(r), r.PathValue("projectId")))
}

func (s Handlers) RevokeOAuthClient(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Application revoked", oauthClientViewOf)(s.Svc.Access().RevokeOAuthClient(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("clientId")))
}
