package payments

import (
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

type periodView struct {
	From     string `json:"from"`
	PaidUSD  string `json:"paidUsd"`
	Payments int    `json:"payments"`
}

type overviewView struct {
	TimeZone         string         `json:"timeZone"`
	Today            periodView     `json:"today"`
	ThisMonth        periodView     `json:"thisMonth"`
	SessionsByStatus map[string]int `json:"sessionsByStatus"`
	NeedsAttention   struct {
		Exceptions             int `json:"exceptions"`
		UnexpectedTransactions int `json:"unexpectedTransactions"`
	} `json:"needsAttention"`
}

// Overview sums up a project's environment: today's and this month's
// payments in the caller's time zone, sessions by status, and what needs
// the merchant.
func (s Handlers) Overview(w http.ResponseWriter, r *http.Request) error {
	var probs payment.Problems
	loc := time.UTC
	for k, v := range r.URL.Query() {
		switch {
		case k != "timeZone":
			probs.Add(k, "is not a known query parameter")
		case len(v) > 1:
			probs.Add(k, "must be given once")
		default:
			l, err := time.LoadLocation(v[0])
			if err != nil || v[0] == "" || v[0] == "Local" {
				probs.Add(k, "must be an IANA time zone name, such as Europe/Berlin or UTC")
			} else {
				loc = l
			}
		}
	}
	if err := probs.Err(); err != nil {
		return err
	}
	o, err := s.Svc.Payments().Overview(r.Context(), rest.Principal(r), r.PathValue("projectId"), loc)
	if err != nil {
		return err
	}
	v := overviewView{TimeZone: loc.String(), SessionsByStatus: map[string]int{},
		Today:     periodView{views.Time(o.Today), payment.FormatUSD(o.PaidTodayUSD), o.PaymentsToday},
		ThisMonth: periodView{views.Time(o.MonthStart), payment.FormatUSD(o.PaidMonthUSD), o.PaymentsMonth}}
	for _, st := range rest.SessionStatuses {
		v.SessionsByStatus[st] = o.SessionsByStatus[st]
	}
	v.NeedsAttention.Exceptions, v.NeedsAttention.UnexpectedTransactions = o.Exceptions, o.Unexpected
	rest.OK(w, r, http.StatusOK, "Overview retrieved", v)
	return nil
}
