package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// The merchant dashboard: plain HTML, CSS and JavaScript modules embedded
// in the binary, no build step. It is a client of the public /api/v1
// routes on the session cookie; the server only hands out the files.
//
//go:embed dashboard
var dashboardFiles embed.FS

// dashboardPolicy allows nothing but the dashboard's own files and calls
// to its own origin: no inline script or style, no third-party request,
// no framing.
const dashboardPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", dashboardPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// Dashboard serves /dashboard/: the files under /dashboard/assets/, and
// the application's page for every other path (it routes in the browser).
func Dashboard() http.Handler {
	assets, _ := fs.Sub(dashboardFiles, "dashboard/assets")
	files := http.StripPrefix("/dashboard/assets/", http.FileServerFS(assets))
	index, _ := dashboardFiles.ReadFile("dashboard/index.html")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w.Header())
		if strings.HasPrefix(r.URL.Path, "/dashboard/assets/") {
			name := strings.TrimPrefix(r.URL.Path, "/dashboard/assets/")
			if _, err := fs.Stat(assets, path.Clean(name)); err != nil || strings.HasSuffix(name, "/") {
				http.Error(w, "not found", http.StatusNotFound)
				return
			}
			w.Header().Set("Cache-Control", "no-cache")
			files.ServeHTTP(w, r)
			return
		}
		page(w, index)
	})
}

// PaymentLink serves a plan's payment link, /pay/{planId}: a page that
// opens a checkout session for the plan and sends the payer to it.
func PaymentLink(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w.Header())
	b, _ := dashboardFiles.ReadFile("dashboard/pay.html")
	page(w, b)
}

func page(w http.ResponseWriter, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}
