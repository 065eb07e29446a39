package store

import (
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable tells whether err is the database being out of reach, not
// a fault of what was asked: a connection refused, dropped or timed out,
// the server shutting down, restarting or starting up. The request is
// worth trying again shortly (a restart takes seconds); the pool drops
// the broken connections and dials new ones.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// connection_exception; insufficient_resources (too many
		// clients); operator_intervention (shutting down, starting up),
		// but a query canceled on purpose (57014).
		class := pgErr.Code[:min(2, len(pgErr.Code))]
		return class == "08" || class == "53" || class == "57" && pgErr.Code != "57014"
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err)
}
