package moneyout

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

const PayoutBatchesPattern = "/api/v1/projects/{projectId}/payout-batches"

// CSVBody tells whether a request sends a CSV body, which only a payout
// batch's upload takes.
func CSVBody(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "text/csv" && r.Method == http.MethodPost && r.Pattern == PayoutBatchesPattern
}

// decodePayoutBatch reads a batch posted as JSON: {fromAddress,
// reference, payouts: [{address, asset, amount, reference}]}. A line's
// errors are named payouts[i].field.
func decodePayoutBatch(body []byte) (payment.PayoutBatchInput, error) {
	obj, err := rest.ParseObject(body)
	if err != nil {
		return payment.PayoutBatchInput{}, err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	in := payment.PayoutBatchInput{FromAddress: f.Str("fromAddress"), Reference: f.Str("reference")}
	lines, _ := f.Array("payouts") // their number is NewPayoutBatch's to bound
	f.Done()
	for i, v := range lines {
		label := fmt.Sprintf("payouts[%d]", i)
		m, isObj := v.(map[string]any)
		if !isObj {
			probs.Add(label, "must be an object")
			in.Lines = append(in.Lines, payment.PayoutLine{Label: label})
			continue
		}
		lf := rest.NewFields(m, label, &probs)
		in.Lines = append(in.Lines, payment.PayoutLine{Label: label, Address: lf.Str("address"), AssetDefinitionID: lf.Str("asset"),
			Amount: lf.Str("amount"), Reference: lf.Str("reference")})
		lf.Done()
	}
	in.Problems = probs
	return in, nil
}

// payoutCSVColumns are a batch file's columns: address, asset and amount
// are required, reference is not; their order is the header's.
var payoutCSVColumns = []string{"address", "asset", "amount", "reference"}

// decodePayoutCSV reads a batch uploaded as CSV (RFC 4180, a header line
// first), with fromAddress and reference in the query string. A line's
// errors are named "line N.field", N its line in the file.
func decodePayoutCSV(body []byte, query url.Values) (payment.PayoutBatchInput, error) {
	var in payment.PayoutBatchInput
	var probs payment.Problems
	for k := range query {
		if k != "fromAddress" && k != "reference" {
			probs.Add(k, "is not a parameter of a CSV upload (fromAddress, reference)")
		}
	}
	if v, ok := query["fromAddress"]; ok {
		in.FromAddress = &v[0]
	}
	if v, ok := query["reference"]; ok {
		in.Reference = &v[0]
	}
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))) // a spreadsheet's byte-order mark
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		probs.Add("payouts", "the file is empty: it needs a header line (address,asset,amount,reference) and a line per payout")
		in.Problems = probs
		return in, nil
	}
	if err != nil {
		return in, csvMalformed(err)
	}
	at := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case !slices.Contains(payoutCSVColumns, h):
			probs.Addf("line 1", "the column %q is not one of address, asset, amount, reference", header[i])
		case at[h] != 0:
			probs.Addf("line 1", "the column %q is given twice", h)
		default:
			at[h] = i + 1
		}
	}
	for _, c := range payoutCSVColumns[:3] {
		if at[c] == 0 {
			probs.Addf("line 1", "the header has no %q column (the header is address,asset,amount,reference)", c)
		}
	}
	if len(probs) > 0 {
		in.Problems = probs
		return in, nil
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return in, csvMalformed(err)
		}
		line, _ := cr.FieldPos(0)
		label := fmt.Sprintf("line %d", line)
		if len(rec) != len(header) {
			probs.Addf(label, "has %d fields, the header %d", len(rec), len(header))
			in.Lines = append(in.Lines, payment.PayoutLine{Label: label})
			continue
		}
		field := func(c string) *string {
			if at[c] == 0 {
				return nil
			}
			v := strings.TrimSpace(rec[at[c]-1])
			return &v
		}
		in.Lines = append(in.Lines, payment.PayoutLine{Label: label, Address: field("address"), AssetDefinitionID: field("asset"),
			Amount: field("amount"), Reference: field("reference")})
	}
	in.Problems = probs
	return in, nil
}

// csvMalformed is a file that is not CSV: a 400 naming where.
func csvMalformed(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return rest.Malformed{Msg: fmt.Sprintf("Malformed CSV at line %d: %v", pe.Line, pe.Err)}
	}
	return rest.Malformed{Msg: "Malformed CSV: " + err.Error()}
}

func (s Handlers) CreatePayoutBatch(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	var in payment.PayoutBatchInput
	var err error
	if CSVBody(r) {
		in, err = decodePayoutCSV(body, r.URL.Query())
	} else {
		in, err = decodePayoutBatch(body)
	}
	if err != nil {
		return rest.DecodeErr(w, r, err)
	}
	rec, err := s.Svc.MoneyOut().CreatePayoutBatch(r.Context(), rest.Principal(r), r.PathValue("projectId"), in)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusCreated, "Payout batch created: an owner approves it", views.BatchDetailOf(rec))
	return nil
}

func (s Handlers) ListPayoutBatches(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParsePayoutBatchQuery(r.URL.Query(), rest.BatchStatuses)
	if err != nil {
		return err
	}
	page, err := s.Svc.MoneyOut().ListPayoutBatches(r.Context(), rest.Principal(r), r.PathValue("projectId"), q)
	if err != nil {
		return err
	}
	rest.OKList(w, r, "Payout batches retrieved", rest.MapSlice(page.Items, views.BatchOf), q, page.Total)
	return nil
}

// GetPayoutBatch answers the batch with its report and payouts, or its
// report as CSV (Accept: text/csv): a line per payout.
func (s Handlers) GetPayoutBatch(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.Svc.MoneyOut().PayoutBatch(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("batchId"))
	if err != nil {
		return err
	}
	if rest.WantsCSV(r) {
		return exportPayouts(w, r, rec)
	}
	rest.OK(w, r, http.StatusOK, "Payout batch retrieved", views.BatchDetailOf(rec))
	return nil
}

var payoutColumns = []string{"id", "batch_id", "line", "reference", "status", "network", "chain_id", "asset", "asset_definition_id",
	"amount", "amount_base_units", "from_address", "to_address", "tx_hash", "failure_reason", "updated_at"}

func exportPayouts(w http.ResponseWriter, r *http.Request, rec payment.BatchRecord) error {
	cw, err := rest.CSVExport(w, r, "payouts-"+rec.Batch.ID, payoutColumns)
	if err != nil {
		return err
	}
	n := 0
	for _, p := range rec.Payouts {
		if err = cw.Write([]string{p.ID, p.BatchID, strconv.Itoa(p.Line), rest.Text(p.Reference), string(p.Status), p.Network,
			strconv.FormatInt(p.ChainID, 10), rest.Text(p.Symbol), p.AssetDefinitionID, p.Amount(), p.AmountBaseUnits, p.FromAddress,
			p.ToAddress, p.TxHash, rest.Text(p.FailureReason), views.Time(p.UpdatedAt)}); err != nil {
			break
		}
		if err = rest.FlushEvery(w, cw, &n); err != nil {
			break
		}
	}
	return rest.EndExport(w, r, cw, n, err)
}

func (s Handlers) ApprovePayoutBatch(w http.ResponseWriter, r *http.Request) error {
	return answerItem(s, w, r, "batchId", "Payout batch approved: its payouts may be signed", service.MoneyOut.ApprovePayoutBatch,
		views.BatchDetailOf)
}

func (s Handlers) CancelPayoutBatch(w http.ResponseWriter, r *http.Request) error {
	return answerItem(s, w, r, "batchId", "Payout batch canceled", service.MoneyOut.CancelPayoutBatch, views.BatchDetailOf)
}

func (s Handlers) GetPayout(w http.ResponseWriter, r *http.Request) error {
	return answerItem(s, w, r, "payoutId", "Payout retrieved", service.MoneyOut.GetPayout, views.PayoutOf)
}

func (s Handlers) CancelPayout(w http.ResponseWriter, r *http.Request) error {
	return answerItem(s, w, r, "payoutId", "Payout canceled", service.MoneyOut.CancelPayout, views.PayoutOf)
}

func (s Handlers) ReportPayoutSent(w http.ResponseWriter, r *http.Request) error {
	return answerReportSent(s, w, r, "payoutId", "Payout transaction recorded", service.MoneyOut.ReportPayoutSent, views.PayoutOf)
}
