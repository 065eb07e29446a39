package checkout

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
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
//
// Only the recipient's owner holds amounts on it: the session's project
// must have verified the recipient in its environment (else the 422 of
// payment.RecipientNotVerified). And holds are bounded (maxOpen, at least
// 1): a plan has at most maxOpen sessions holding amounts at once, and no
// amount handed out exceeds the plan's by more than maxOpen base units;
// past either, the session is refused (ErrTooManyHolds).
func (s Store) ReserveAmounts(ctx context.Context, cs payment.Session, maxOpen int) ([]payment.PaymentOption, error) {
	out := make([]payment.PaymentOption, len(cs.PaymentOptions))
	copy(out, cs.PaymentOptions)
	recipient := strings.ToLower(cs.DepositAddress)
	maxOpen = max(maxOpen, 1)
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		// The owner's check and the plan's count under the locks that a
		// change of owner and the plan's other openings take.
		if err := lockAddress(ctx, tx, recipient); err != nil {
			return err
		}
		var owner string
		err := tx.QueryRow(ctx, `SELECT project_id FROM recipients WHERE is_live = $1 AND address = $2 AND verified_at IS NOT NULL`,
			cs.IsLive, recipient).Scan(&owner)
		if err != nil && err != pgx.ErrNoRows {
			return err
		}
		if owner != cs.ProjectID {
			return payment.RecipientNotVerified("paymentPlanId", payment.ChecksumAddress(recipient))
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "reservation-plan/"+cs.PaymentPlanID); err != nil {
			return err
		}
		var open int
		if err := tx.QueryRow(ctx, `SELECT count(DISTINCT session_id) FROM amount_reservations
			WHERE plan_id = $1 AND held_until > $2 AND session_id <> $3`, cs.PaymentPlanID, cs.CreatedAt, cs.ID).Scan(&open); err != nil {
			return err
		}
		if open >= maxOpen {
			return tooManyHolds(maxOpen)
		}
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
			// Only the owner's holds take amounts: another project's (from
			// before the owner verified the address) never match a
			// transfer to it (payment.Recipients), so they cannot raise
			// what the owner's customers are asked.
			rows, err := tx.Query(ctx, `SELECT amount_base_units::text FROM amount_reservations
				WHERE network = $1 AND asset_id = $2 AND recipient = $3 AND held_until > $4
				AND amount_base_units >= $5::numeric AND project_id = $6 ORDER BY amount_base_units`,
				o.Network, o.AssetDefinitionID, recipient, cs.CreatedAt.Add(-payment.ReservationGrace), o.AmountBaseUnits, cs.ProjectID)
			if err != nil {
				return err
			}
			held, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			out[i].AmountBaseUnits = payment.NextFreeUnits(o.AmountBaseUnits, held)
			if !withinBound(o.AmountBaseUnits, out[i].AmountBaseUnits, maxOpen) {
				return tooManyHolds(maxOpen)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO amount_reservations (session_id, project_id, is_live, network,
				asset_id, recipient, amount_base_units, held_from, held_until, plan_id) VALUES ($1,$2,$3,$4,$5,$6,$7::numeric,$8,$9,$10)`,
				cs.ID, cs.ProjectID, cs.IsLive, o.Network, o.AssetDefinitionID, recipient, out[i].AmountBaseUnits,
				cs.CreatedAt, cs.LateUntil, cs.PaymentPlanID); err != nil {
				return db.MapErr(err)
			}
		}
		return nil
	})
	return out, err
}

// ErrTooManyHolds marks the refusal of a session past the bound of holds
// (ReserveAmounts).
var ErrTooManyHolds = errors.New("too many open holds")

func tooManyHolds(maxOpen int) error {
	return fmt.Errorf("%w (%w)", &payment.Error{Kind: payment.KindConflict, Message: fmt.Sprintf(
		"The payment plan has %d checkout sessions holding an amount on its recipient, the most a plan may have open at once "+
			"(RECIPIENT_MAX_OPEN_HOLDS): retry once one has ended, or use another plan or recipient", maxOpen)}, ErrTooManyHolds)
}

// withinBound tells whether amount asks at most maxOpen base units more
// than base.
func withinBound(base, amount string, maxOpen int) bool {
	b, ok1 := new(big.Int).SetString(base, 10)
	a, ok2 := new(big.Int).SetString(amount, 10)
	return ok1 && ok2 && new(big.Int).Sub(a, b).Cmp(big.NewInt(int64(maxOpen))) <= 0
}

// SharedRecipientWatch is how long after its last hold ended a shared
// recipient stays watched: its transfers are recorded (as unmatched) that
// long, for a chainwatch workflow that runs late.
const SharedRecipientWatch = 7 * 24 * time.Hour

// SharedRecipients returns which of addresses (lowercase) are shared
// recipients watched on a network: held by a session now, or until
// SharedRecipientWatch ago.
func (s Store) SharedRecipients(ctx context.Context, network string, addresses []string) ([]string, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT DISTINCT recipient FROM amount_reservations
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
func (s Store) Recipients(ctx context.Context, network string, isLive bool, transfers []payment.Transfer) (payment.Recipients, error) {
	return Recipients(ctx, s.h.Pool, network, isLive, transfers)
}

func Recipients(ctx context.Context, q db.RowsQuerier, network string, isLive bool, transfers []payment.Transfer) (payment.Recipients, error) {
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
	rows, err := q.Query(ctx, `SELECT `+SessionColumns+` FROM checkout_sessions
		WHERE (deposit_address <> '' AND NOT shared_recipient AND lower(deposit_address) = ANY($1)
			OR id IN (SELECT session_id FROM bitcoin_deposit_addresses WHERE address = ANY($1))) AND is_live = $2`, to, isLive)
	if err != nil {
		return out, err
	}
	if out.Deposit, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Session, error) { return ScanSession(r) }); err != nil {
		return out, err
	}
	// A recipient with holds is shared; its owner is the project that
	// verified it in the environment, none when no project did (holds
	// opened before verification was required).
	rows, err = q.Query(ctx, `SELECT DISTINCT r.recipient, coalesce(v.project_id, ''), r.is_live FROM amount_reservations r
		LEFT JOIN recipients v ON v.is_live = r.is_live AND v.address = r.recipient AND v.verified_at IS NOT NULL
		WHERE r.network = $1 AND r.recipient = ANY($2) AND r.is_live = $3`, network, to, isLive)
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
				AND r.amount_base_units = t.amount AND r.is_live = $5
			LEFT JOIN recipients v ON v.is_live = r.is_live AND v.address = r.recipient AND v.verified_at IS NOT NULL
			-- only the owner's holds count (any, on a recipient nobody owns)
			WHERE v.project_id IS NULL OR v.project_id = r.project_id)
		SELECT `+SessionColumns+`, h_network, h_asset, h_recipient, h_amount, h_from, h_until
		FROM h JOIN checkout_sessions ON id = h_session`, network, to, assets, amounts, isLive)
	if err != nil {
		return out, err
	}
	out.Reserved, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (payment.Reservation, error) {
		var h payment.Reservation
		cs, err := ScanSessionWith(row, &h.Network, &h.AssetID, &h.Recipient, &h.AmountBaseUnits, &h.From, &h.Until)
		h.Session = cs
		return h, err
	})
	return out, err
}
