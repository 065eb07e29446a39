// Package redact keeps secrets out of what the engine writes: URL names an
// endpoint without the parts that carry a provider's key or a password,
// Register records the deployment's secrets, String scrubs them out of a
// text, and Handler scrubs every log record before it is written.
package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// minSecret is the shortest part of a URL or value taken for a secret
// alone: shorter ones ("v2", "rpc", a port, a word) are too common to
// scrub wherever they appear. A shorter password is still scrubbed
// where it is written with its user (user:password@).
const minSecret = 8

// URL names the endpoint of raw without its secrets: scheme://host[:port],
// followed by "/…#" and a short fingerprint of what was left out (the
// user, password, path, query and fragment) when there was any, so two
// endpoints on one host stay told apart and the same endpoint always
// reads the same. A text that is no URL with a host reads "(a URL)" and
// its fingerprint.
func URL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "(a URL #" + Fingerprint(raw) + ")"
	}
	rest := strings.TrimPrefix(raw, u.Scheme+"://")
	if u.User != nil {
		rest = strings.TrimPrefix(rest, u.User.String()+"@")
	}
	rest = strings.TrimPrefix(rest, u.Host)
	if u.User == nil && (rest == "" || rest == "/") {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + "/…#" + Fingerprint(raw)
}

// Fingerprint is a short, stable digest of s: the first 8 hex digits of
// its SHA-256, enough to tell configured values apart, far too little to
// find one from it.
func Fingerprint(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

var (
	mu       sync.RWMutex
	secrets  = map[string]string{} // secret -> what is written in its place
	replacer = strings.NewReplacer()
)

// RegisterURL records the secrets of a configured URL (an RPC endpoint, a
// database or Redis URL): the URL itself, in its raw and its
// percent-decoded forms, its password, and its path segments (but a
// database's name) and query values long enough to be keys. String writes URL(raw) in place of the
// URL and a fingerprint in place of each part.
func RegisterURL(raw string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return
	}
	add := map[string]string{raw: URL(raw)}
	if u, err := url.Parse(raw); err == nil {
		add[u.String()] = URL(raw)
		add[u.Redacted()] = URL(raw)
		if p, ok := u.User.Password(); ok {
			part(add, p)
			add[u.User.String()+"@"] = "[redacted #" + Fingerprint(u.User.String()) + "]@"
		}
		// A database's or Redis's path is the database's name, no key,
		// and also written by its driver's errors: left as it is.
		switch u.Scheme {
		case "postgres", "postgresql", "redis", "rediss":
		default:
			for _, seg := range strings.Split(u.EscapedPath(), "/") {
				part(add, seg)
				if d, err := url.PathUnescape(seg); err == nil {
					part(add, d)
				}
			}
		}
		part(add, u.RawQuery)
		for _, vs := range u.Query() {
			for _, v := range vs {
				part(add, v)
				part(add, url.QueryEscape(v))
			}
		}
		part(add, u.Fragment)
	}
	store(add)
}

// Register records secret values (an API key, a key of 32 bytes, a
// token) that String replaces with their fingerprints.
func Register(values ...string) {
	add := map[string]string{}
	for _, v := range values {
		part(add, strings.TrimSpace(v))
	}
	store(add)
}

func part(add map[string]string, s string) {
	if len(s) >= minSecret {
		if _, ok := add[s]; !ok {
			add[s] = "[redacted #" + Fingerprint(s) + "]"
		}
	}
}

func store(add map[string]string) {
	mu.Lock()
	defer mu.Unlock()
	for k, v := range add {
		if _, ok := secrets[k]; !ok {
			secrets[k] = v
		}
	}
	// Longest first, so a URL is replaced whole before its parts are.
	keys := make([]string, 0, len(secrets))
	for k := range secrets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	pairs := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k, secrets[k])
	}
	replacer = strings.NewReplacer(pairs...)
}

// String is s with every registered secret replaced.
func String(s string) string {
	mu.RLock()
	r := replacer
	mu.RUnlock()
	return r.Replace(s)
}

// Error is err with every registered secret replaced in its text, or nil.
// What it wraps stays reachable to errors.Is and errors.As.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := String(msg); clean != msg {
		return scrubbed{msg: clean, err: err}
	}
	return err
}

type scrubbed struct {
	msg string
	err error
}

func (e scrubbed) Error() string { return e.msg }
func (e scrubbed) Unwrap() error { return e.err }
