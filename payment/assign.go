package payment

// Assign assigns an unexpected transfer to session s, which then counts
// it as a payment (the merchant's resolution of a transfer its address's
// session no longer took), and returns the events of the change. The
// transfer must be final, and s must be of its project and environment
// and take its asset. Assigning it again to the same session changes
// nothing; to another is a conflict.
func (t *Transaction) Assign(s Session) ([]EventType, error) {
	if t.AssignedSessionID == s.ID && s.ID != "" {
		return nil, nil
	}
	if s.ProjectID != t.ProjectID || s.IsLive != t.IsLive {
		return nil, NotFound("Checkout session")
	}
	switch {
	case t.AssignedSessionID != "":
		return nil, Conflict("This transfer is assigned to another checkout session already")
	case !t.Unexpected:
		return nil, Conflict("Only an unexpected transfer can be assigned; this one counts for its checkout session")
	case t.Status != TxFinalized:
		return nil, Conflict("Only a final transfer can be assigned; this one is " + string(t.Status))
	}
	if _, ok := s.Option(t.AssetDefinitionID); !ok {
		var probs Problems
		probs.Add("checkoutSessionId", "the checkout session does not take "+t.AssetDefinitionID)
		return nil, probs.Err()
	}
	t.AssignedSessionID = s.ID
	return []EventType{EventTxAssigned}, nil
}

// LineOf is a transaction as a payment line of the session it counts for.
func LineOf(t Transaction, late bool) PaymentLine {
	return PaymentLine{AssetID: t.AssetDefinitionID, AmountBaseUnits: t.AmountBaseUnits, Status: t.Status, Late: late}
}
