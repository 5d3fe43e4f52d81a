package result

// Replay is what a decision-log replay found before any timing: how many logged decisions the
// new policy reproduces and every one it flips. The runs of the same workload then measure the
// replay; a flip not in the reviewed list is a wrong_decision there like any other.
type Replay struct {
	Workload string `json:"workload"`
	Log      string `json:"log"`
	Path     string `json:"path"`
	Query    string `json:"query"`
	// Field is the member of object results compared; empty for boolean results.
	Field  string `json:"field,omitempty"`
	Events int    `json:"events"`
	// Skipped are the log's events left out (for the whole log), by why; OutOfOrder how many
	// events were sorted into timestamp order.
	Skipped    map[string]int `json:"skipped,omitempty"`
	OutOfOrder int            `json:"out_of_order,omitempty"`
	// Reproduced are the events whose logged decision the new policy gives again.
	Reproduced int `json:"reproduced"`
	// Flipped are all the others, in the log's timestamp order; Intended of them were in the
	// reviewed list of expected changes, and Unmet are the reviewed ones the policy did not flip.
	Flipped  []Flip   `json:"flipped"`
	Intended int      `json:"intended"`
	Unmet    []string `json:"unmet,omitempty"`
	// NotChecked says why the impact was not computed (no policy of the user's to ask).
	NotChecked string `json:"not_checked,omitempty"`
}

// Flip is a logged decision the new policy decides otherwise.
type Flip struct {
	DecisionID string `json:"decision_id"`
	Path       string `json:"path"`
	Source     string `json:"source"` // file:line of the event
	Old        string `json:"old"`
	New        string `json:"new"` // allow, deny, undefined, or the error
	Intended   bool   `json:"intended,omitempty"`
}
