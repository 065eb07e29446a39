package api

import (
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strings"
)

// openAPI is the OpenAPI 3.1 document of the REST API, kept by hand beside
// the routes it describes. The end-to-end tests validate every request and
// response they make against it, and a unit test fails when a route and
// the document disagree.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI document (JSON).
func OpenAPI() []byte { return slices.Clone(openAPI) }

// docsRoutes serves the document and a reference page rendered from it,
// with nothing fetched from elsewhere when it is read: public routes of
// the table (api/openapi.json describes them too), counted per client
// address in the relaxed tier.
func (s *Server) docsRoutes() {
	doc := OpenAPIFor(s.Shape)
	s.handle("/api/v1/openapi.json", handlers{http.MethodGet: func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(doc)
		return nil
	}})
	page, err := referencePage(doc)
	s.handle("/api/v1/docs", handlers{http.MethodGet: func(w http.ResponseWriter, _ *http.Request) error {
		if err != nil {
			http.Error(w, "the API reference could not be rendered", http.StatusInternalServerError)
			return nil
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
		_, _ = w.Write(page)
		return nil
	}})
}

// The parts of the document the reference page shows.
type (
	oaDoc struct {
		Info struct {
			Title, Version, Description string
		}
		Paths map[string]map[string]json.RawMessage
	}
	oaOperation struct {
		Summary, Description string
		Tier                 string           `json:"x-rate-limit-tier"`
		Security             []map[string]any `json:"security"`
		Parameters           []oaParameter
		RequestBody          *struct {
			Content map[string]struct {
				Schema struct {
					Ref string `json:"$ref"`
				}
			}
		} `json:"requestBody"`
		Responses map[string]struct{ Description string }
	}
	oaParameter struct {
		Name, In, Description string
		Required              bool
	}
	refOperation struct {
		Method, Path, Summary, Description, Tier, Auth, Body string
		Params                                               []oaParameter
		Responses                                            []string
	}
)

var referenceTemplate = template.Must(template.New("ref").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2433}
h1{font-size:1.6rem}.op{border:1px solid #d8dde6;border-radius:8px;padding:.8rem 1rem;margin:1rem 0}
.m{display:inline-block;min-width:4.2rem;font:600 .8rem monospace;padding:.15rem .4rem;border-radius:4px;color:#fff;text-align:center}
.GET{background:#2f7d4f}.POST{background:#2757a6}.PATCH{background:#8a5a00}.DELETE{background:#a62727}
code,.p{font-family:ui-monospace,monospace;font-size:.9rem}.meta{color:#5a6478;font-size:.85rem}
table{border-collapse:collapse;margin:.4rem 0}td{padding:.15rem .6rem .15rem 0;vertical-align:top}
</style></head><body>
<h1>{{.Title}} <span class="meta">{{.Version}}</span></h1>
<p>{{.Description}}</p>
<p>Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1).</p>
{{range .Ops}}<div class="op"><span class="m {{.Method}}">{{.Method}}</span> <span class="p">{{.Path}}</span>
<div><strong>{{.Summary}}</strong></div>{{if .Description}}<p>{{.Description}}</p>{{end}}
<div class="meta">Auth: {{.Auth}} · Rate-limit tier: {{.Tier}}{{if .Body}} · Body: <code>{{.Body}}</code>{{end}}</div>
{{if .Params}}<table>{{range .Params}}<tr><td><code>{{.Name}}</code></td><td class="meta">{{.In}}{{if .Required}}, required{{end}}</td><td>{{.Description}}</td></tr>{{end}}</table>{{end}}
<div class="meta">Answers: {{range $i, $r := .Responses}}{{if $i}}, {{end}}{{$r}}{{end}}</div></div>
{{end}}</body></html>`))

// referencePage renders the API reference from the document.
func referencePage(document []byte) ([]byte, error) {
	var doc oaDoc
	if err := json.Unmarshal(document, &doc); err != nil {
		return nil, err
	}
	var ops []refOperation
	for path, item := range doc.Paths {
		var shared []oaParameter
		if raw, ok := item["parameters"]; ok {
			_ = json.Unmarshal(raw, &shared)
		}
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var o oaOperation
			if err := json.Unmarshal(raw, &o); err != nil {
				return nil, err
			}
			ro := refOperation{Method: strings.ToUpper(method), Path: path, Summary: o.Summary, Description: o.Description,
				Tier: o.Tier, Auth: "API key", Params: append(slices.Clone(shared), o.Parameters...)}
			switch {
			case len(o.Security) == 0:
				ro.Auth = "none"
			case slices.ContainsFunc(o.Security, func(m map[string]any) bool { return len(m) == 0 }):
				ro.Auth = "none, or an API key"
			}
			if o.RequestBody != nil {
				ro.Body = strings.TrimPrefix(o.RequestBody.Content["application/json"].Schema.Ref, "#/components/schemas/")
			}
			for code, r := range o.Responses {
				ro.Responses = append(ro.Responses, code+" "+r.Description)
			}
			slices.Sort(ro.Responses)
			ops = append(ops, ro)
		}
	}
	slices.SortFunc(ops, func(a, b refOperation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	var b strings.Builder
	err := referenceTemplate.Execute(&b, map[string]any{"Title": doc.Info.Title, "Version": doc.Info.Version,
		"Description": doc.Info.Description, "Ops": ops})
	return []byte(b.String()), err
}
