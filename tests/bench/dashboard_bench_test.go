package bench

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkExportTransactionsCSV: the CSV export of a project's 100,000
// transactions, streamed in one request (Accept: text/csv); rows/s is the
// figure to compare.
func BenchmarkExportTransactionsCSV(b *testing.B) {
	f := setup(b)
	target := "/api/v1/projects/" + f.projectID + "/transactions"
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Authorization", "Bearer "+f.key)
		req.Header.Set("Accept", "text/csv")
		rec := httptest.NewRecorder()
		f.ours.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("export: %d %.300s", rec.Code, rec.Body.String())
		}
		if n := bytes.Count(rec.Body.Bytes(), []byte("\n")); n != seedRows+1 {
			b.Fatalf("export: %d lines, want %d", n, seedRows+1)
		}
	}
	b.ReportMetric(float64(seedRows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkOverview: the dashboard's overview of a project with 100,000
// transactions (half of them counted payments over the last day).
func BenchmarkOverview(b *testing.B) {
	f := setup(b)
	target := "/api/v1/projects/" + f.projectID + "/overview?timeZone=Europe/Berlin"
	check(b, f.ours, target, f.key, `"sessionsByStatus"`)
	run(b, f.ours, f.key, func(int64) string { return target })
}
