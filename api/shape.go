package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/views"
)

// Shape is the form of the API a deployment serves (views.Shape).
type Shape = views.Shape

const (
	// ShapeFirst is the spec's sections 2 to 5 (the default).
	ShapeFirst = views.ShapeFirst
	// ShapeSecond is section 9's: transaction statuses pending,
	// completed and failed; transactions filtered by page, limit, status
	// and network only; a checkout session read by its ID with
	// credentials; the session token as a bearer token.
	ShapeSecond = views.ShapeSecond
)

// ParseShape reads API_SHAPE.
func ParseShape(s string) (Shape, error) {
	switch Shape(s) {
	case "", ShapeFirst:
		return ShapeFirst, nil
	case ShapeSecond:
		return ShapeSecond, nil
	}
	return "", fmt.Errorf("API_SHAPE must be first or second, not %q", s)
}

// txStatus is a transaction status as the deployment's shape names it.
func (s *Server) txStatus(st string) string { return views.TxStatus(s.shape, st) }

// shapeSummaries names the statuses of a session's transactions as the
// deployment's shape does (REST only: the Connect API keeps the first
// shape's).
func (s *Server) shapeSummaries(txs []views.TransactionSummary) {
	for i := range txs {
		txs[i].Status = s.txStatus(txs[i].Status)
	}
}

// transactionQuery parses the transactions list's query in the
// deployment's shape.
func (s *Server) transactionQuery(r *http.Request) (payment.ListQuery, error) {
	if s.shape != ShapeSecond {
		return payment.ParseTransactionQuery(r.URL.Query(), txStatuses, s.svc.Catalog().Networks())
	}
	return payment.ParseSecondShapeTransactionQuery(r.URL.Query(), s.svc.Catalog().Networks())
}

// bearerSession is a second-shape call's session token sent as
// `Authorization: Bearer svc_st_…`: it signs the user in as the cookie
// does.
func (s *Server) bearerSession(h http.Header) string {
	if s.shape != ShapeSecond {
		return ""
	}
	scheme, token, found := strings.Cut(h.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(strings.TrimSpace(token), payment.UserSessionTokenPrefix) {
		return ""
	}
	return strings.TrimSpace(token)
}

// OpenAPIFor returns the OpenAPI document of a shape: the second shape's
// is the first's with section 9's differences (transaction statuses, the
// transactions list's parameters, a session read by its ID, the session
// token as a bearer token, login's answer).
func OpenAPIFor(shape Shape) []byte {
	if shape != ShapeSecond {
		return OpenAPI()
	}
	var doc map[string]any
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		panic(err) // the embedded document is valid JSON: a test reads it
	}
	obj := func(m any, keys ...string) map[string]any {
		for _, k := range keys {
			m = m.(map[string]any)[k]
		}
		return m.(map[string]any)
	}
	statuses := []any{"pending", "completed", "failed"}
	for _, schema := range []string{"Transaction", "TransactionSummary"} {
		obj(doc, "components", "schemas", schema, "properties", "status")["enum"] = statuses
	}
	info := obj(doc, "info")
	info["description"] = fmt.Sprint(info["description"]) + "\n\nThis deployment serves the second shape of the API (API_SHAPE=second)."

	list := obj(doc, "paths", "/api/v1/projects/{projectId}/transactions", "get")
	var params []any
	for _, p := range list["parameters"].([]any) {
		switch p.(map[string]any)["name"] {
		case "from", "to", "isLive":
			continue
		case "status":
			p.(map[string]any)["schema"] = map[string]any{"type": "string", "enum": statuses}
			p.(map[string]any)["description"] = "pending, completed (confirmed or finalized on-chain) or failed"
		}
		params = append(params, p)
	}
	list["parameters"] = params

	bySession := obj(doc, "paths", "/api/v1/checkout/sessions/{sessionToken}")
	obj(bySession["parameters"].([]any)[0])["description"] = "The session's token (64 hex characters), or its ID (cs_…) with credentials"
	get := obj(bySession, "get")
	get["summary"] = "A session: by its token as its payer sees it, or by its ID (with an API key or a session token) as the merchant does"
	get["security"] = []any{map[string]any{}, map[string]any{"apiKeyHeader": []any{}}, map[string]any{"bearer": []any{}},
		map[string]any{"sessionBearer": []any{}}}
	data := obj(get, "responses", "200", "content", "application/json", "schema", "properties")
	data["data"] = map[string]any{"anyOf": []any{map[string]any{"$ref": "#/components/schemas/PublicSession"},
		map[string]any{"$ref": "#/components/schemas/Session"}}}
	obj(get, "responses")["401"] = map[string]any{"description": "A session ID without credentials, or with bad ones",
		"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/ErrorEnvelope"}}}}

	login := obj(doc, "paths", "/api/v1/auth/login", "post", "responses", "200", "content", "application/json", "schema", "properties")
	login["data"] = map[string]any{"type": "object", "required": []any{"user", "token", "expiresAt"}, "properties": map[string]any{
		"user":      map[string]any{"$ref": "#/components/schemas/User"},
		"token":     map[string]any{"type": "string", "description": "The session token (svc_st_…): send it as Authorization: Bearer"},
		"expiresAt": map[string]any{"type": "string", "format": "date-time"}}}

	obj(doc, "components", "securitySchemes")["sessionBearer"] = map[string]any{"type": "http", "scheme": "bearer",
		"description": "A signed-in user's session token (svc_st_…, from login) as Authorization: Bearer, wherever the session cookie is accepted"}
	for _, item := range obj(doc, "paths") {
		for _, op := range item.(map[string]any) {
			o, ok := op.(map[string]any)
			if !ok {
				continue
			}
			sec, _ := o["security"].([]any)
			for _, req := range sec {
				if _, cookie := req.(map[string]any)["sessionCookie"]; cookie {
					o["security"] = append(sec, map[string]any{"sessionBearer": []any{}})
					break
				}
			}
		}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return out
}
