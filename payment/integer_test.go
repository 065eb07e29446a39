package payment

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestParseIntegerReadsWholeNumbersHoweverWritten(t *testing.T) {
	type r struct {
		n           int64
		whole, fits bool
	}
	for s, want := range map[string]r{
		"900": {900, true, true}, "900.0": {900, true, true}, "9e2": {900, true, true}, "9E2": {900, true, true},
		"9.00e2": {900, true, true}, "9e+2": {900, true, true}, "90000e-2": {900, true, true}, "0.9e3": {900, true, true},
		"-900.000": {-900, true, true}, "0": {0, true, true}, "-0": {0, true, true}, "-0.0": {0, true, true},
		"0e999999999999": {0, true, true}, "0.0e-99999999999999": {0, true, true},
		"9223372036854775807": {math.MaxInt64, true, true}, "-9223372036854775808": {math.MinInt64, true, true},
		"9223372036854775808": {math.MaxInt64, true, false}, "-9223372036854775809": {math.MinInt64, true, false},
		"1e19": {math.MaxInt64, true, false}, "1e400": {math.MaxInt64, true, false}, "-1e400": {math.MinInt64, true, false},
		"1e9999999999999999999": {math.MaxInt64, true, false}, "123456789012345678901234567890": {math.MaxInt64, true, false},
		"900.5": {0, false, false}, "9.005e2": {0, false, false}, "1e-1": {0, false, false}, "1e-400": {0, false, false},
		"1e-99999999999999999999": {0, false, false}, "0.1": {0, false, false},
		// Not JSON numbers.
		"": {}, "-": {}, "+5": {}, "05": {}, "5.": {}, ".5": {}, "5e": {}, "5e+": {}, "0x10": {}, "1_000": {}, " 5": {},
		"NaN": {}, "Infinity": {}, "5e2.0": {}, "--5": {}, "1e2e3": {},
	} {
		n, whole, fits := ParseInteger(s)
		if (r{n, whole, fits}) != want {
			t.Errorf("%q: %d %v %v; want %+v", s, n, whole, fits, want)
		}
	}
}

// ParseInteger agrees with exact arithmetic on every JSON number.
func FuzzParseInteger(f *testing.F) {
	for _, s := range []string{"900", "900.0", "9e2", "9.00e2", "900.5", "1e400", "-0.0", "12345678901234567890e-1", "0.000e5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, whole, fits := ParseInteger(s)
		var num json.Number
		isNumber := json.Unmarshal([]byte(s), &num) == nil && string(num) == s && !strings.ContainsAny(s, " \t\r\n")
		if !isNumber {
			if whole {
				t.Fatalf("%q is not a JSON number, read as %d", s, n)
			}
			return
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")) > 4 {
			return // exact arithmetic would take too long
		}
		v, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read %q", s)
		}
		if whole != v.IsInt() {
			t.Fatalf("%q: whole %v", s, whole)
		}
		if !whole {
			return
		}
		inRange := v.Num().IsInt64()
		if fits != inRange || fits && v.Num().Int64() != n {
			t.Fatalf("%q: %d fits %v; exactly %s", s, n, fits, v.RatString())
		}
	})
}
