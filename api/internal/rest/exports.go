package rest

import (
	"encoding/csv"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

// WantsCSV tells whether a list request asks for its CSV export
// (Accept: text/csv).
func WantsCSV(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/csv" {
			return true
		}
	}
	return false
}

// CSVExport starts a CSV download of a list: not paginated (page and
// limit are refused), every row the filters keep, written as the
// database returns them.
func CSVExport(w http.ResponseWriter, r *http.Request, name string, header []string) (*csv.Writer, error) {
	var probs payment.Problems
	for _, k := range []string{"page", "limit"} {
		if r.URL.Query().Has(k) {
			probs.Add(k, "is not taken by CSV exports: they hold every row the filters keep")
		}
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	env := "sandbox"
	if Principal(r).IsLive {
		env = "live"
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s-%s.csv"`, name, env, time.Now().UTC().Format("2006-01-02")))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	cw := csv.NewWriter(w)
	return cw, cw.Write(header)
}

// FlushEvery sends the rows written so far every 500 rows, so that a long
// export streams instead of filling a buffer.
func FlushEvery(w http.ResponseWriter, cw *csv.Writer, row *int) error {
	*row++
	if *row%500 != 0 {
		return nil
	}
	cw.Flush()
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return cw.Error()
}

// EndExport finishes a stream. A refusal before any row (the project is
// not the caller's) is still an envelope; an error after the first bytes
// cannot be one any more, so the download is cut short (and logged).
func EndExport(w http.ResponseWriter, r *http.Request, cw *csv.Writer, rows int, err error) error {
	if rows == 0 && err != nil && payment.KindOf(err) != payment.KindInternal {
		w.Header().Del("Content-Disposition")
		return err
	}
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	if err != nil {
		slog.WarnContext(r.Context(), "CSV export cut short", "path", r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// Text guards a free-text value against spreadsheet formula injection
// (OWASP): a value a spreadsheet would evaluate is prefixed with an
// apostrophe.
func Text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func OptTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return views.Time(*t)
}
