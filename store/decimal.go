package store

import "github.com/shopspring/decimal"

// mustDecimal parses a numeric column read as text; Postgres only hands
// back valid numerics.
func mustDecimal(s string) decimal.Decimal {
	return decimal.RequireFromString(s)
}

func optDecimal(s *string) *decimal.Decimal {
	if s == nil {
		return nil
	}
	d := mustDecimal(*s)
	return &d
}

func decString(d *decimal.Decimal) *string {
	if d == nil {
		return nil
	}
	s := d.String()
	return &s
}
