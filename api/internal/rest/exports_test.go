package rest

import "testing"

// A free-text value a spreadsheet would run as a formula is exported with
// an apostrophe in front; others as they are.
func TestExportedTextIsNeverAFormula(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1":                       "'+1",
		"-2+3":                     "'-2+3",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\tcmd":                    "'\tcmd",
		"buyer@example.com":        "buyer@example.com",
		`{"orderId":"=1"}`:         `{"orderId":"=1"}`,
		"":                         "",
	} {
		if got := Text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
}
