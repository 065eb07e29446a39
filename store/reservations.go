package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

// ReserveAmounts gives a session on a shared recipient its exact amounts:
// for each payment option, the smallest amount at or above the option's
// that no other hold on the same (network, asset, recipient) has taken
// within ReservationGrace of the session's creation, held from then until
// its late-payment window ends. It returns the session's options with
// those amounts. A session that holds its amounts already (a retry) gets
// them back unchanged. It runs before the session is recorded: a session
// then refused leaves its holds to nobody until they end, which wastes an
// amount and never gives one to two sessions.
func (s *Store) ReserveAmounts(ctx context.Context, cs payment.Session) ([]payment.PaymentOption, error) {
	out := make([]payment.PaymentOption, len(cs.PaymentOptions))
	copy(out, cs.PaymentOptions)
	recipient := strings.ToLower(cs.DepositAddress)
	err := s.WithTx(ctx, func(tx pgx.Tx) error {
		for i, o := range out {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
				fmt.Sprintf("reservation/%s/%s/%s", o.Network, o.AssetDefinitionID, recipient)); err != nil {
				return err
			}
			var mine string
			err := tx.QueryRow(ctx, `SELECT amount_base_units::text FROM amount_reservations
				WHERE session_id = $1 AND network = $2 AND asset_id = $3`, cs.ID, o.Network, o.AssetDefinitionID).Scan(&mine)
			if err == nil {
				out[i].AmountBaseUnits = mine
				continue
			}
			if err != pgx.ErrNoRows {
				return err
			}
			rows, err := tx.Query(ctx, `SELECT amount_base_units::text FROM amount_reservations
				WHERE network = $1 AND asset_id = $2 AND recipient = $3 AND held_until > $4
				AND amount_base_units >= $5::numeric ORDER BY amount_base_units`,
				o.Network, o.AssetDefinitionID, recipient, cs.CreatedAt.Add(-payment.ReservationGrace), o.AmountBaseUnits)
			if err != nil {
				return err
			}
			held, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			out[i].AmountBaseUnits = payment.NextFreeUnits(o.AmountBaseUnits, held)
			if _, err := tx.Exec(ctx, `INSERT INTO amount_reservations (session_id, project_id, is_live, network,
				asset_id, recipient, amount_base_units, held_from, held_until) VALUES ($1,$2,$3,$4,$5,$6,$7::numeric,$8,$9)`,
				cs.ID, cs.ProjectID, cs.IsLive, o.Network, o.AssetDefinitionID, recipient, out[i].AmountBaseUnits,
				cs.CreatedAt, cs.LateUntil); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	return out, err
}

// SharedRecipientWatch is how long after its last hold ended a shared
// recipient stays watched: its transfers are recorded (as unmatched) that
// long, for a scanner that runs late.
const SharedRecipientWatch = 7 * 24 * time.Hour

// SharedRecipients returns which of addresses (lowercase) are shared
// recipients watched on a network: held by a session now, or until
// SharedRecipientWatch ago.
func (s *Store) SharedRecipients(ctx context.Context, network string, addresses []string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT recipient FROM amount_reservations
		WHERE network = $1 AND recipient = ANY($2) AND held_until > now() - make_interval(secs => $3)`,
		network, addresses, SharedRecipientWatch.Seconds())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Recipients returns what tells the sessions the transfers of one network
// and environment pay (payment.Recipients): the sessions whose own deposit
// addresses they pay, and on shared recipients the holds of their exact
// amounts and the recipients' projects.
func (s *Store) Recipients(ctx context.Context, network string, isLive bool, transfers []payment.Transfer) (payment.Recipients, error) {
	return recipients(ctx, s.pool, network, isLive, transfers)
}

func recipients(ctx context.Context, q querier, network string, isLive bool, transfers []payment.Transfer) (payment.Recipients, error) {
	out := payment.Recipients{Shared: map[string]payment.RecipientOwner{}}
	var to, assets, amounts []string
	for _, t := range transfers {
		to = append(to, strings.ToLower(t.To))
		assets = append(assets, t.AssetID)
		amounts = append(amounts, t.AmountBaseUnits)
	}
	if len(to) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions
		WHERE deposit_address <> '' AND NOT shared_recipient AND lower(deposit_address) = ANY($1) AND is_live = $2`, to, isLive)
	if err != nil {
		return out, err
	}
	if out.Deposit, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Session, error) { return scanSession(r) }); err != nil {
		return out, err
	}
	rows, err = q.Query(ctx, `SELECT DISTINCT ON (recipient) recipient, project_id, is_live FROM amount_reservations
		WHERE network = $1 AND recipient = ANY($2) AND is_live = $3 ORDER BY recipient, held_from DESC`, network, to, isLive)
	if err != nil {
		return out, err
	}
	for rows.Next() {
		var r string
		var o payment.RecipientOwner
		if err := rows.Scan(&r, &o.ProjectID, &o.IsLive); err != nil {
			rows.Close()
			return out, err
		}
		out.Shared[r] = o
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	rows, err = q.Query(ctx, `WITH h AS (
			SELECT DISTINCT r.session_id AS h_session, r.network AS h_network, r.asset_id AS h_asset,
				r.recipient AS h_recipient, r.amount_base_units::text AS h_amount, r.held_from AS h_from, r.held_until AS h_until
			FROM unnest($2::text[], $3::text[], $4::numeric[]) AS t(recipient, asset_id, amount)
			JOIN amount_reservations r ON r.network = $1 AND r.recipient = t.recipient AND r.asset_id = t.asset_id
				AND r.amount_base_units = t.amount AND r.is_live = $5)
		SELECT `+sessionColumns+`, h_network, h_asset, h_recipient, h_amount, h_from, h_until
		FROM h JOIN checkout_sessions ON id = h_session`, network, to, assets, amounts, isLive)
	if err != nil {
		return out, err
	}
	out.Reserved, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (payment.Reservation, error) {
		var h payment.Reservation
		cs, err := scanSessionWith(row, &h.Network, &h.AssetID, &h.Recipient, &h.AmountBaseUnits, &h.From, &h.Until)
		h.Session = cs
		return h, err
	})
	return out, err
}
