package api

import (
	"context"
	"net/http"
)

func contextWith(r *http.Request, k, v any) context.Context {
	return context.WithValue(r.Context(), k, v)
}

func contextWithoutCancel(r *http.Request) context.Context {
	return context.WithoutCancel(r.Context())
}
