package rest

import (
	"io"
	"net/http"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// The skeletons most REST handlers share: read the body into an input,
// call one operation, write its record (or a page of them) in the
// envelope. A handler that does more (a CSV export, a status chosen by the
// outcome) writes its answer itself.

// Respond writes the record an operation returns, in view, with status
// and msg; an error the operation returns is the handler's, for serve to
// answer. It is curried so that the operation's two results are passed
// whole: respond(w, r, 200, "Plan retrieved", views.PlanOf)(svc.GetPlan(…)).
func Respond[T, V any](w http.ResponseWriter, r *http.Request, status int, msg string, view func(T) V) func(T, error) error {
	return func(rec T, err error) error {
		if err != nil {
			return err
		}
		OK(w, r, status, msg, view(rec))
		return nil
	}
}

// RespondPage writes a page of a list under q, each item in view, as
// respond writes one record.
func RespondPage[T, V any](w http.ResponseWriter, r *http.Request, msg string, q payment.ListQuery, view func(T) V) func(service.Page[T], error) error {
	return func(page service.Page[T], err error) error {
		if err != nil {
			return err
		}
		OKList(w, r, msg, MapSlice(page.Items, view), q, page.Total)
		return nil
	}
}

// RespondList writes a whole list (one without pages), each item in
// view, as respond writes one record.
func RespondList[T, V any](w http.ResponseWriter, r *http.Request, msg string, view func(T) V) func([]T, error) error {
	return Respond(w, r, http.StatusOK, msg, func(items []T) []V { return MapSlice(items, view) })
}

// BodyOf reads the request's body (serve has bounded and checked it) with
// decode; a body that is not JSON is the handler's error, which serve
// answers 400 (FailErr), as DecodeErr does.
func BodyOf[T any](r *http.Request, decode func([]byte) (T, error)) (T, error) {
	body, _ := io.ReadAll(r.Body)
	return decode(body)
}

// FieldsOf reads the request's body as an object of the string fields
// named (BodyFields).
func FieldsOf(r *http.Request, required []string, optional ...string) (map[string]*string, error) {
	body, _ := io.ReadAll(r.Body)
	return BodyFields(body, required, optional...)
}
