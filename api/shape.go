package api

import (
	"encoding/json"
	"fmt"

	"github.com/paymentsd/paymentsd/payment/views"
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
	info := jsonObject(doc, "info")
	info["description"] = fmt.Sprint(info["description"]) + "\n\nThis deployment serves the second shape of the API (API_SHAPE=second)."
	secondShapeTransactions(doc)
	secondShapeSessionByToken(doc)
	secondShapeLogin(doc)
	secondShapePlans(doc)
	secondShapeSessionBearer(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return out
}

// jsonObject is the object at keys under m, in a decoded JSON document.
func jsonObject(m any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m.(map[string]any)[k]
	}
	return m.(map[string]any)
}

// secondShapeTransactions: three statuses, and a list filtered by status
// alone.
func secondShapeTransactions(doc map[string]any) {
	obj := jsonObject
	statuses := []any{"pending", "completed", "failed"}
	for _, schema := range []string{"Transaction", "TransactionSummary"} {
		obj(doc, "components", "schemas", schema, "properties", "status")["enum"] = statuses
	}
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
}

// secondShapeSessionByToken: a session by its token, or by its ID with
// credentials.
func secondShapeSessionByToken(doc map[string]any) {
	obj := jsonObject
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
}

// secondShapeLogin: a login answers the session token too.
func secondShapeLogin(doc map[string]any) {
	obj := jsonObject
	login := obj(doc, "paths", "/api/v1/auth/login", "post", "responses", "200", "content", "application/json", "schema", "properties")
	login["data"] = map[string]any{"type": "object", "required": []any{"user", "token", "expiresAt"}, "properties": map[string]any{
		"user":      map[string]any{"$ref": "#/components/schemas/User"},
		"token":     map[string]any{"type": "string", "description": "The session token (svc_st_…): send it as Authorization: Bearer"},
		"expiresAt": map[string]any{"type": "string", "format": "date-time"}}}
}

// secondShapePlans: a plan priced in token amounts.
func secondShapePlans(doc map[string]any) {
	obj := jsonObject
	// The plan payload: the second shape's, or the first's (which the
	// dashboard sends); a payload with any of the first's own fields is
	// read as the first's.
	schemas := obj(doc, "components", "schemas")
	schemas["TokenPlanInput"] = map[string]any{"type": "object", "additionalProperties": false,
		"description": "A plan priced in token amounts, paid to one recipient address that its sessions share; each session asks one option's amount plus a few base units of its own (docs/decisions.md, \"Payments to a shared recipient address\")",
		"properties": map[string]any{
			"name":             map[string]any{"type": "string", "minLength": 1, "maxLength": 200},
			"recipientAddress": map[string]any{"type": "string", "pattern": "^0x[0-9a-fA-F]{40}$", "description": "An EVM address, lowercase or EIP-55 checksummed"},
			"paymentOptions": map[string]any{"type": "array", "minItems": 1, "maxItems": 50, "items": map[string]any{
				"type": "object", "additionalProperties": false, "required": []any{"networkId", "amount"},
				"properties": map[string]any{
					"networkId":    map[string]any{"type": []any{"string", "integer"}, "description": "A network's key (GET /api/v1/assets) or its chain ID"},
					"tokenAddress": map[string]any{"type": "string", "description": "The token's contract; empty or the zero address for the network's native coin"},
					"amount":       map[string]any{"type": "string", "description": "In whole token units, no finer than the token's decimals", "examples": []any{"4.5"}},
				}}},
			"redirectUrl": map[string]any{"type": "string", "format": "uri"},
			"quoteTtl":    map[string]any{"type": "integer", "minimum": 60, "maximum": 604800, "description": "Seconds a session holds its amounts (and stays open); default: the project's session lifetime"},
		},
		"examples": []any{map[string]any{"name": "Sticker pack", "recipientAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
			"paymentOptions": []any{map[string]any{"networkId": "base", "tokenAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "amount": "4.5"}},
			"quoteTtl":       900}},
	}
	for _, path := range []string{"/api/v1/projects/{projectId}/payment-plans", "/api/v1/projects/{projectId}/payment-plans/{planId}"} {
		for _, method := range []string{"post", "patch"} {
			op, ok := obj(doc, "paths", path)[method].(map[string]any)
			if !ok {
				continue
			}
			second := "TokenPlanInput"
			if method == "patch" {
				second = "TokenPlanUpdate" // name and redirectUrl change; the rest is refused
			}
			obj(op, "requestBody", "content", "application/json")["schema"] = map[string]any{"anyOf": []any{
				map[string]any{"$ref": "#/components/schemas/" + second}, map[string]any{"$ref": "#/components/schemas/PlanInput"}}}
		}
	}
	update := map[string]any{}
	for k, v := range schemas["TokenPlanInput"].(map[string]any) {
		update[k] = v
	}
	delete(update, "examples")
	update["description"] = "A change to a plan: its name and redirectUrl; the other fields cannot be changed"
	schemas["TokenPlanUpdate"] = update
	obj(schemas, "TokenPlanInput")["required"] = []any{"name", "recipientAddress", "paymentOptions"}
}

// secondShapeSessionBearer: a signed-in user's session token as a bearer,
// wherever the session cookie is accepted.
func secondShapeSessionBearer(doc map[string]any) {
	obj := jsonObject
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
}
