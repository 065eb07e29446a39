package workflows

import (
	"iter"
	"slices"

	"github.com/paymentsd/paymentsd/payment"
)

// ledger is what a session's workflow knows of the session's payments: a
// line per payment, in the order the session first saw them, the transfers
// it knows of, and the hashes the payer submitted.
//
// A line is one payment from the first word of it to the session's end;
// it never moves. It starts as a transfer chainwatch reported (found by
// its transfer key, until its record is told), as a payer's claim or as a
// merchant's assignment (found by their record's ID). A reported transfer
// becomes its record's line once the record is told; a record told again
// under another ID takes the line with it.
type ledger struct {
	lines []*ledgerLine
	// known are the transfer keys the session knows of: reported to it,
	// or told of by a record.
	known map[string]bool
	// recordOf is the ID of the record last told of a transfer, by the
	// transfer's key.
	recordOf map[string]string
	// claimed are the hashes the payer submitted, in order.
	claimed []string
}

// ledgerLine is one payment of a session.
type ledgerLine struct {
	payment.PaymentLine
	// record is the ID of the payment's transaction record: "" for a
	// reported transfer whose record is not told yet.
	record string
	// transfer and transaction are, for a payment chainwatch reported,
	// its transfer's key and its transaction's (the transaction's
	// workflow ID).
	transfer, transaction string
	// seenLate tells that the session first saw the payment late.
	seenLate bool
}

func newLedger() *ledger {
	return &ledger{known: map[string]bool{}, recordOf: map[string]string{}}
}

// payments are the session's payment lines, in the order it first saw them.
func (l *ledger) payments() iter.Seq[payment.PaymentLine] {
	return func(yield func(payment.PaymentLine) bool) {
		for _, line := range l.lines {
			if !yield(line.PaymentLine) {
				return
			}
		}
	}
}

// len is the number of payment lines.
func (l *ledger) len() int { return len(l.lines) }

// knows tells whether the session knows of a transfer (by its key).
func (l *ledger) knows(transfer string) bool { return l.known[transfer] }

// know marks a transfer known without a line of its own: one that is no
// longer the session's.
func (l *ledger) know(transfer string) { l.known[transfer] = true }

// addReported adds the line of a transfer chainwatch reported, whose record
// is not told yet.
func (l *ledger) addReported(p SessionTransfer, line payment.PaymentLine, seenLate bool) {
	l.known[p.TransferKey()] = true
	l.lines = append(l.lines, &ledgerLine{PaymentLine: line, transfer: p.TransferKey(), transaction: p.Key(), seenLate: seenLate})
}

// addRecord adds the line of a record (a claim, an assignment) the ledger
// has no line of.
func (l *ledger) addRecord(record string, line payment.PaymentLine, seenLate bool) {
	l.lines = append(l.lines, &ledgerLine{PaymentLine: line, record: record, seenLate: seenLate})
}

// ofRecord returns a record's line, nil when there is none.
func (l *ledger) ofRecord(record string) *ledgerLine {
	if record == "" {
		return nil // a reported transfer's line, not a record's
	}
	for _, line := range l.lines {
		if line.record == record {
			return line
		}
	}
	return nil
}

// unrecorded returns the line of a reported transfer whose record is not
// told yet, nil when there is none.
func (l *ledger) unrecorded(transfer string) *ledgerLine {
	for _, line := range l.lines {
		if line.record == "" && line.transfer == transfer {
			return line
		}
	}
	return nil
}

// recordedForNoSession drops the line of a transfer recorded as
// unexpected: it counts for no session.
func (l *ledger) recordedForNoSession(transfer string) {
	l.known[transfer] = true
	if line := l.unrecorded(transfer); line != nil {
		l.drop(line)
	}
}

// transactionEnded drops the lines of the transfers of a transaction that
// were reported and not recorded: its workflow ended without recording
// them.
func (l *ledger) transactionEnded(transaction string) {
	l.lines = slices.DeleteFunc(l.lines, func(line *ledgerLine) bool {
		return line.record == "" && line.transaction == transaction
	})
}

// told brings the ledger in line with a record's news and returns the
// record's line: transfer is the record's transfer's key ("" for a claim
// no transfer matched), and seenLate tells whether a payment first seen
// now is seen late.
func (l *ledger) told(record, transfer string, seenLate bool) *ledgerLine {
	line := l.ofRecord(record)
	if transfer != "" {
		if before := l.recordOf[transfer]; line == nil && before != "" && before != record {
			// The transfer recorded again under another ID: its line
			// goes to the new record rather than counting twice.
			if line = l.ofRecord(before); line != nil {
				line.record = record
			}
		}
		l.recordOf[transfer] = record
		l.known[transfer] = true
		if reported := l.unrecorded(transfer); reported != nil {
			if line == nil {
				// The reported transfer's line is its record's.
				reported.record = record
				line = reported
			} else {
				line.seenLate = line.seenLate && reported.seenLate
				l.drop(reported)
			}
		}
	}
	if line == nil {
		line = &ledgerLine{record: record, seenLate: seenLate}
		l.lines = append(l.lines, line)
	}
	return line
}

func (l *ledger) drop(line *ledgerLine) {
	l.lines = slices.DeleteFunc(l.lines, func(other *ledgerLine) bool { return other == line })
}

// claim notes a hash the payer submitted.
func (l *ledger) claim(hash string) {
	if !l.isClaimed(hash) {
		l.claimed = append(l.claimed, hash)
	}
}

// isClaimed tells whether the payer submitted a hash.
func (l *ledger) isClaimed(hash string) bool { return slices.Contains(l.claimed, hash) }

// claims is the number of hashes the payer submitted.
func (l *ledger) claims() int { return len(l.claimed) }
