// Package rest is the floor under the REST handlers' areas (api/identity,
// api/access, api/checkout, api/payments, api/moneyout, api/webhooks):
// what every area's handlers share, and what package api's routing and
// middleware share with them. Edge is the server's state a handler
// reaches (the service, the deployment's public URL and shape, the rate
// limiters, the trusted proxies); beside it are the spec's envelope and
// its errors (OK, OKList, Fail, FailErr), the skeletons of a handler
// (Respond, RespondPage, RespondList, BodyOf, FieldsOf), the JSON body's
// and the query string's parsers, the views the handlers render, who a
// call acts as (Principal, CallerKey, CurrentUser), the client's address
// behind the trusted proxies, the rate limits' tiers, and sudo mode's
// checks. It imports no area; every area imports it.
package rest
