package webhooks

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// ResealFunc returns a sealed secret of an endpoint as it should be stored
// now, and whether that changed it; an error leaves the value as it is.
type ResealFunc func(endpointID, sealed string) (string, bool, error)

// ResealFailure is an endpoint whose secret could not be sealed again, and
// why (the error never holds the secret).
type ResealFailure struct {
	EndpointID string
	Err        error
}

// ResealBatch is what one ResealSecrets call did.
type ResealBatch struct {
	// Last is the ID of the last endpoint of the batch, where the next
	// batch starts; empty when no endpoint was left.
	Last string
	// Seen counts the batch's endpoints; Resealed lists those whose
	// secrets were written again, and Failed those left as they were.
	Seen     int
	Resealed []payment.WebhookEndpoint
	Failed   []ResealFailure
}

// ResealSecrets seals again the secrets (current and previous) of up to
// limit endpoints after the endpoint ID after, in ID order, deleted ones
// included, in one database transaction under the rows' locks (so a
// rotation of the same endpoint meanwhile waits, and is not overwritten).
// An endpoint whose secret does not open is left as it is and reported.
// audit, when set, makes the audit entry of an endpoint resealed, written
// in the same transaction as the change.
func (s Store) ResealSecrets(ctx context.Context, after string, limit int, reseal ResealFunc,
	audit func(payment.WebhookEndpoint) payment.AuditEntry) (ResealBatch, error) {
	var out ResealBatch
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		out = ResealBatch{}
		rows, err := tx.Query(ctx, `SELECT id, project_id, is_live, secret, previous_secret FROM webhook_endpoints
			WHERE id > $1 ORDER BY id LIMIT $2 FOR UPDATE`, after, limit)
		if err != nil {
			return err
		}
		type row struct {
			ep               payment.WebhookEndpoint
			secret, previous string
		}
		batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var x row
			err := r.Scan(&x.ep.ID, &x.ep.ProjectID, &x.ep.IsLive, &x.secret, &x.previous)
			return x, err
		})
		if err != nil {
			return err
		}
		for _, x := range batch {
			out.Seen++
			out.Last = x.ep.ID
			secret, changed, err := reseal(x.ep.ID, x.secret)
			if err != nil {
				out.Failed = append(out.Failed, ResealFailure{EndpointID: x.ep.ID, Err: err})
				continue
			}
			previous, changedPrevious, err := reseal(x.ep.ID, x.previous)
			if err != nil {
				out.Failed = append(out.Failed, ResealFailure{EndpointID: x.ep.ID, Err: err})
				continue
			}
			if !changed && !changedPrevious {
				continue
			}
			// updated_at is the endpoint's as the merchant sees it: a
			// reseal changes nothing they can read, so it stays.
			if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET secret = $2, previous_secret = $3 WHERE id = $1`,
				x.ep.ID, secret, previous); err != nil {
				return err
			}
			if audit != nil {
				if err := db.RecordAudit(ctx, tx, audit(x.ep)); err != nil {
					return err
				}
			}
			out.Resealed = append(out.Resealed, x.ep)
		}
		return nil
	})
	return out, db.MapErr(err)
}
