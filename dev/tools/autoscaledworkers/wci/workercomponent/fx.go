// Package workercomponent is where Temporal's auto-scaled workers add their
// per-namespace worker controller; the development server adds none.
package workercomponent

import "go.uber.org/fx"

// Module adds nothing.
var Module = fx.Options()
