package proxy

// What the scan's refusals say to the client.

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/sluice-gw/sluice/proxy/reqscan"
)

// scanBody validates the body as JSON in one pass and finds its fields.
func scanBody(body []byte, fields reqscan.Fields) (reqscan.Request, *apiError) {
	r, err := reqscan.ScanWith(body, fields)
	if err != nil {
		return r, scanError(err)
	}
	if r.Model.Len() == 0 || r.ModelName == "" {
		return r, errInvalid(http.StatusBadRequest, "missing_model",
			"You must provide a model parameter (a string).")
	}
	return r, nil
}

// scanError is the client's error for a body reqscan refused.
func scanError(err error) *apiError {
	var fe *reqscan.FieldError // declared here: on the heap only for a refused body
	if errors.As(err, &fe) {
		// Valid JSON the backend could read differently (a duplicated or
		// escaped key, a value it would coerce): acting on it would let
		// the key's authorisation, limits or billing apply to another
		// value than the one served.
		e := errInvalid(http.StatusBadRequest, "invalid_field",
			fmt.Sprintf("The request body's `%s` cannot be read unambiguously: %v.", fe.Field, err))
		e.param = fe.Field
		return e
	}
	return errInvalid(http.StatusBadRequest, "invalid_json",
		fmt.Sprintf("The request body is not valid JSON: %v.", err))
}

// refuseUnservable refuses the Responses requests the gateway cannot serve
// safely. A request_id makes the backend store the response under an id
// the client chose, which could collide with another client's (and route
// that client's follow-ups here). A background response runs after its
// answer, outside the gateway's slots, limits and billing.
func refuseUnservable(r *reqscan.Request) *apiError {
	field, why := "", ""
	switch {
	case r.RequestID.Len() > 0:
		field, why = "request_id", "the response's id is the backend's to choose"
	case r.Background:
		field, why = "background", "a background response would run outside the gateway's slots, limits and billing"
	default:
		return nil
	}
	e := errInvalid(http.StatusBadRequest, "unsupported_field",
		fmt.Sprintf("The gateway does not serve requests with `%s`: %s.", field, why))
	e.param = field
	return e
}
