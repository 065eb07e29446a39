package db

import (
	"github.com/shopspring/decimal"
)

// MustDecimal parses a numeric column read as text; Postgres only hands
// back valid numerics.
func MustDecimal(s string) decimal.Decimal {
	return decimal.RequireFromString(s)
}

func OptDecimal(s *string) *decimal.Decimal {
	if s == nil {
		return nil
	}
	d := MustDecimal(*s)
	return &d
}

func DecString(d *decimal.Decimal) *string {
	if d == nil {
		return nil
	}
	s := d.String()
	return &s
}
