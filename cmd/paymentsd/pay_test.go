package main

import "testing"

func TestPayAmount(t *testing.T) {
	cases := []struct {
		option, given, due, paid string
		decimals                 int
		want                     string
	}{
		{"25", "", "25", "0", 6, "25000000"},                             // the amount due
		{"25", "10", "25", "0", 6, "10000000"},                           // a partial payment
		{"0.008333333333333334", "", "25", "10", 18, "5000000000000001"}, // what is left, rounded up
		{"25", "30.5", "25", "0", 6, "30500000"},                         // an over-payment
	}
	for _, c := range cases {
		got, err := payAmount(c.option, c.given, c.due, c.paid, c.decimals)
		if err != nil || got.String() != c.want {
			t.Errorf("%+v: %v %v, want %s", c, got, err, c.want)
		}
	}
	if _, err := payAmount("25", "-1", "25", "0", 6); err == nil {
		t.Error("a negative amount was accepted")
	}
}
