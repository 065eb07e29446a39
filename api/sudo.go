package api

import (
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest"
)

// DefaultReauthWindow is how long after the last sign-in or
// re-authentication a session may take a sensitive action (sudo mode).
const DefaultReauthWindow = 10 * time.Minute

// ReauthenticationRequired is the error code (403) of a sensitive action
// asked by a session whose last sign-in is older than the window: the
// client re-authenticates (POST /api/v1/auth/reauthenticate) and retries.
const ReauthenticationRequired = rest.ReauthenticationRequired

// SessionCookie is the dashboard session's cookie (the spec: a name
// ending in session_token).
const SessionCookie = rest.SessionCookie

// EnvironmentHeader chooses the environment a cookie request acts in:
// live or sandbox (the default), as a dashboard's test-mode switch.
const EnvironmentHeader = rest.EnvironmentHeader

// SensitiveRoute reports whether a route (method and pattern) needs a
// fresh sign-in (sudo mode), for the tests and the documents.
func SensitiveRoute(method, pattern string) bool { return rest.SensitiveRoute(method, pattern) }
