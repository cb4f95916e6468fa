package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/julyfs/julyfs/runner/approval"
	"github.com/julyfs/julyfs/runner/sessions"
)

// The approval routes: the calls of a session that agent.yaml's
// approvals: asks for wait in the agent's approval.Queue (an
// approval.requested event on the session's stream announces each)
// until one of these decides it, or the queue's timeout denies it.
//
//	GET  /<slug>/v1/sessions/{id}/approvals           {"approvals": [pending call...]}, oldest first
//	POST /<slug>/v1/sessions/{id}/approvals/{callId}  {"allow": bool, "always"?: bool} → {"sessionId","callId","decision"}
//
// A callId that is not waiting is 404 not_found; one decided already
// (answered, timed out, or denied by a restart of the server: its
// approval.decided event is in the session's log) is 409
// already_decided.

func (a *agentAPI) approvalRoutes(mux *http.ServeMux, base string) {
	mux.HandleFunc("GET "+base+"/v1/sessions/{id}/approvals", a.listApprovals)
	mux.HandleFunc("POST "+base+"/v1/sessions/{id}/approvals/{callId}", a.decideApproval)
}

func (a *agentAPI) listApprovals(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := a.Host.Get(id); err != nil {
		writeErr(w, err)
		return
	}
	list := []approval.Pending{}
	if a.Approvals != nil {
		list = a.Approvals.Pending(id)
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
}

// decision is the body of an approval's POST.
type decision struct {
	Allow *bool `json:"allow"`
	// Always also allows the call's tool for the rest of the session.
	Always bool `json:"always"`
}

func (a *agentAPI) decideApproval(w http.ResponseWriter, r *http.Request) {
	id, call := r.PathValue("id"), r.PathValue("callId")
	var d decision
	if !a.s.decode(w, r, &d) {
		return
	}
	if d.Allow == nil {
		writeError(w, http.StatusBadRequest, "bad_request", `the body needs "allow": {"allow": true} or {"allow": false}`)
		return
	}
	if _, err := a.Host.Get(id); err != nil {
		writeErr(w, err)
		return
	}
	if a.Approvals == nil {
		writeError(w, http.StatusNotFound, "not_found", "no call of session "+id+" is waiting for approval (this server has no approval queue)")
		return
	}
	err := a.Approvals.Decide(id, call, *d.Allow, d.Always)
	switch {
	case errors.Is(err, approval.ErrUnknownCall):
		if d, ok := a.loggedDecision(id, call); ok {
			// Decided where the queue does not remember it: by an
			// earlier process (a restart), or long ago.
			writeError(w, http.StatusConflict, "already_decided", fmt.Sprintf("approval already decided: call %s of session %s was %s by %s (%s)", call, id, pastTense[d.Decision], d.By, d.Reason))
			return
		}
		writeError(w, http.StatusNotFound, "not_found", err.Error())
		return
	case errors.Is(err, approval.ErrDecided):
		writeError(w, http.StatusConflict, "already_decided", err.Error())
		return
	case err != nil:
		writeErr(w, err)
		return
	}
	dec := sessions.DecisionDeny
	if *d.Allow {
		dec = sessions.DecisionAllow
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessionId": id, "callId": call, "decision": dec})
}

var pastTense = map[string]string{sessions.DecisionAllow: "allowed", sessions.DecisionDeny: "denied"}

// loggedDecision finds call's approval.decided event in session id's log.
func (a *agentAPI) loggedDecision(id, call string) (sessions.ApprovalDecided, bool) {
	_, events, _, err := a.Host.Store().Read(id)
	if err != nil {
		return sessions.ApprovalDecided{}, false
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != sessions.TypeApprovalDecided {
			continue
		}
		var d sessions.ApprovalDecided
		if json.Unmarshal(events[i].Data, &d) == nil && d.CallID == call {
			return d, true
		}
	}
	return sessions.ApprovalDecided{}, false
}
