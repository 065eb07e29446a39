// Package web holds the hosted checkout page, embedded in the binary: a
// single page that reads the public session endpoint and shows the
// customer what to pay, where, and how it is going.
package web

import (
	"bytes"
	_ "embed"
	"net/http"
)

//go:embed checkout.html
var checkoutPage []byte

//go:embed refund.html
var refundTemplate []byte

// refundPage is the refund claim page in the checkout page's style: the
// customer's pages look alike, and their style is written once.
var refundPage = withStyle(refundTemplate, checkoutPage)

func withStyle(page, from []byte) []byte {
	i, j := bytes.Index(from, []byte("<style>")), bytes.Index(from, []byte("</style>"))
	return bytes.Replace(page, []byte("<!-- the checkout page's style -->"), from[i:j+len("</style>")], 1)
}

// contentSecurityPolicy is the hosted page's policy. frame-ancestors 'none'
// keeps any other site from framing the page: framed, it could be dressed
// up or overlaid (clickjacking) to make a payer copy an address or approve
// a wallet request they did not mean to.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' https: data:; style-src 'unsafe-inline'; " +
	"script-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'"

// Checkout serves the hosted checkout page; the page itself reads the
// session from the API by the token in its URL.
func Checkout(w http.ResponseWriter, r *http.Request) { hosted(w, checkoutPage) }

// Refund serves a refund's claim page, where the customer gives the
// address the refund is paid to; the page reads the refund by the claim
// token in its URL.
func Refund(w http.ResponseWriter, r *http.Request) { hosted(w, refundPage) }

// hosted serves a hosted page whose URL holds a secret token.
func hosted(w http.ResponseWriter, page []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer") // the URL holds the session token
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY") // frame-ancestors for browsers that predate it
	_, _ = w.Write(page)
}
